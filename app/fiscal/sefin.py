"""Sefin Nacional (NFS-e): ``GET /nfse/{chave}`` and ``POST /nfse/{chave}/eventos`` (protocol.md §4.4-4.5).

The ``pedRegEvento`` 1.01 is built from our own text, signed with the company's A1 (enveloped,
SEFAZ profile: C14N 1.0, RSA-SHA1, as the real accepted pedidos are; protocol.md §4.9), checked
against the official XSD and sent as ``{"pedidoRegistroEventoXmlGZipB64": ...}``. Its Id is "PRE"
+ key + tpEvento: current production removed ``nPedRegEvento`` (the ⚠ of §4.5), and the XSD nfelib
ships agrees (``PRE[0-9]{56}``).

Answers: 200/201 carry the XML (``nfseXmlGZipB64`` / ``eventoXmlGZipB64``) as the bytes Sefin
issued; 4xx carry ``erro`` (one object, or reportedly an array) or ``erros[]`` and are returned as
a :class:`SefinAnswer` for the caller to judge; 5xx, 408 and 429 are :class:`HttpStatusError`
(retryable), like a dropped connection. Every call is one TLS connection (``app.fiscal.nfse_http``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from xml.sax.saxutils import escape

import httpx

from app.certs.a1 import A1Certificate
from app.config.endpoints import Service
from app.core.clock import brasilia_iso
from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf
from app.core.keys import NfseKey
from app.core.manifestation import InvalidManifestation
from app.core.products import Environment
from app.core.taker import RejectionReason, ped_reg_id, taker_type, validate_reason
from app.documents.nfse import decode_payload
from app.fiscal.errors import HttpStatusError, MalformedResponse, RequestInvalid
from app.fiscal.http import HttpClientFactory
from app.fiscal.nfse_http import JsonReply, call_json, gzip_b64
from app.fiscal.schemas import Schema, SchemaInvalid, validate
from app.fiscal.xmldsig import SignatureInvalid, sign_with_a1
from app.safexml import XmlRejected

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
PED_REG_VERSION = "1.01"
VER_APLIC = "CapturaDFe-0.1"  # TSVerAplic: 1-20 characters


# --- the pedido de registro de evento ------------------------------------------------------------


def build_ped_reg_evento(
    key: NfseKey | str,
    tp_evento: str,
    author: Cnpj | Cpf,
    dh_evento: datetime,
    tp_amb: Environment | int,
    reason: RejectionReason | None = None,
) -> bytes:
    """The unsigned ``pedRegEvento`` (no declaration); raises :class:`RequestInvalid` on bad input."""
    try:
        chave = key if isinstance(key, NfseKey) else NfseKey.parse(key)
        kind = taker_type(tp_evento)
        if kind.with_reason or reason is not None:
            reason = validate_reason(tp_evento, reason.code if reason else None, reason.text if reason else None)
        ident = ped_reg_id(chave.value, tp_evento)
    except (InvalidIdentifier, InvalidManifestation) as error:
        raise RequestInvalid(error.message) from error
    if dh_evento.tzinfo is None:
        raise RequestInvalid("A data e hora do evento precisa de fuso horário.")
    amb = int(tp_amb)
    if amb not in (1, 2):
        raise RequestInvalid(f"Ambiente inválido: {tp_amb!r} (1 produção, 2 produção restrita).")
    who = (
        f"<CNPJAutor>{author.value}</CNPJAutor>" if isinstance(author, Cnpj) else f"<CPFAutor>{author.value}</CPFAutor>"
    )
    motive = f"<cMotivo>{reason.code}</cMotivo><xMotivo>{escape(reason.text)}</xMotivo>" if reason is not None else ""
    return (
        f'<pedRegEvento xmlns="{NFSE_NS}" versao="{PED_REG_VERSION}"><infPedReg Id="{ident}">'
        f"<tpAmb>{amb}</tpAmb><verAplic>{VER_APLIC}</verAplic><dhEvento>{brasilia_iso(dh_evento)}</dhEvento>"
        f"{who}<chNFSe>{chave.value}</chNFSe>"
        f"<e{tp_evento}><xDesc>{kind.x_desc}</xDesc>{motive}</e{tp_evento}>"
        "</infPedReg></pedRegEvento>"
    ).encode()


def prepare_ped_reg_evento(a1: A1Certificate, unsigned: bytes) -> bytes:
    """A :func:`build_ped_reg_evento` signed with ``a1`` and valid by pedRegEvento_v1.01.xsd: the
    exact bytes to send."""
    reference = unsigned.split(b'Id="', 1)[1].split(b'"', 1)[0].decode("ascii")
    try:
        signed = sign_with_a1(unsigned, reference, a1)
    except SignatureInvalid as error:
        raise RequestInvalid(f"Não foi possível assinar o pedido de registro de evento: {error.message}") from error
    try:
        validate(signed, Schema.NFSE_PED_REG_EVENTO)
    except SchemaInvalid as error:
        raise RequestInvalid(
            f"Pedido de registro de evento recusado antes do envio: {error.message}", errors=error.errors
        ) from error
    return signed


# --- answers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SefinError:
    code: str
    message: str


@dataclass(frozen=True)
class SefinAnswer:
    """What Sefin answered: ``xml`` (the NFS-e or the registered evento) on success, else ``errors``."""

    status: int
    xml: bytes | None
    errors: tuple[SefinError, ...]
    reply: JsonReply = field(repr=False)

    @property
    def ok(self) -> bool:
        return self.xml is not None

    @property
    def code(self) -> str | None:
        return self.errors[0].code if self.errors else None

    @property
    def message(self) -> str:
        return "; ".join(f"{e.code}: {e.message}" if e.code else e.message for e in self.errors)


def _errors(payload: dict[str, object]) -> tuple[SefinError, ...]:
    found: list[object] = []
    for name in ("erro", "erros", "Erros"):
        value = payload.get(name)
        if isinstance(value, list):
            found.extend(value)
        elif isinstance(value, dict):
            found.append(value)
    errors = []
    for item in found:
        if not isinstance(item, dict):
            continue
        code = str(item.get("codigo") or item.get("Codigo") or "").strip()
        text = next(
            (str(item[k]) for k in ("descricao", "Descricao", "mensagem", "Mensagem") if item.get(k)), "sem descrição"
        )
        complement = item.get("complemento") or item.get("Complemento")
        errors.append(SefinError(code, f"{text} ({complement})" if complement else text))
    return tuple(errors)


def _answer(reply: JsonReply, url: str, success: int, field_name: str) -> SefinAnswer:
    status = reply.status
    if status >= 500 or status in (408, 429):
        raise HttpStatusError(status, url=url, detail=reply.response_bytes[:200].decode("utf-8", "replace"))
    if status == success:
        packed = reply.payload.get(field_name)
        if not isinstance(packed, str) or not packed:
            raise MalformedResponse(f"Resposta da Sefin Nacional sem {field_name}.", url=url)
        try:
            xml = decode_payload(packed)
        except XmlRejected as error:
            raise MalformedResponse(f"XML da resposta da Sefin Nacional ilegível: {error.message}", url=url) from error
        return SefinAnswer(status, xml, (), reply)
    errors = _errors(reply.payload) or (SefinError("", f"HTTP {status} sem descrição do erro"),)
    return SefinAnswer(status, None, errors, reply)


class SefinClient:
    """The Sefin Nacional calls of one company (its certificate's client)."""

    def __init__(self, http_client: httpx.Client, base_url: str, environment: Environment) -> None:
        self.http_client = http_client
        self.base_url = base_url.rstrip("/")
        self.environment = environment

    @classmethod
    def from_factory(cls, factory: HttpClientFactory, a1: A1Certificate, environment: Environment) -> SefinClient:
        service = Service.NFSE_SEFIN
        return cls(factory.client(a1, service, environment), factory.url(service, environment), environment)

    def get_nfse(self, key: NfseKey) -> SefinAnswer:
        """``GET /nfse/{chave}``: the NFS-e (200) or why not (400 bad key, 403 not a party, 404)."""
        url = f"{self.base_url}/nfse/{key.value}"
        return _answer(call_json(self.http_client, "GET", url), url, 200, "nfseXmlGZipB64")

    def register_event(self, key: NfseKey, signed_ped_reg_evento: bytes) -> SefinAnswer:
        """``POST /nfse/{chave}/eventos``: the registered ``evento`` (201) or the rejection (4xx)."""
        if f"<tpAmb>{int(self.environment)}</tpAmb>".encode() not in signed_ped_reg_evento:
            raise RequestInvalid(
                f"Pedido de registro de evento de outro ambiente enviado a {self.environment.label}: seria rejeitado."
            )
        url = f"{self.base_url}/nfse/{key.value}/eventos"
        body = {"pedidoRegistroEventoXmlGZipB64": gzip_b64(signed_ped_reg_evento)}
        return _answer(call_json(self.http_client, "POST", url, body=body), url, 201, "eventoXmlGZipB64")
