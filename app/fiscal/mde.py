"""Recipient manifestation (MD-e) at the Ambiente Nacional's NFeRecepcaoEvento4: build, sign, send, store.

Layout (protocol.md §3.2–3.5): ``envEvento`` 1.00 holding 1..20 signed ``evento`` 1.00, each with
``infEvento Id = "ID" + tpEvento + chNFe + nSeqEvento (2 digits)``, ``cOrgao`` 91, ``verEvento``
1.00 and the exact ``descEvento``; ``xJust`` (15–255) only for 210220 (optional) and 210240
(required). The MD-e schema still takes numeric CNPJ and chNFe only: an alphanumeric author or
key is refused here, before anything is built.

The ``evento`` is signed with the company's A1 (SEFAZ profile: enveloped, RSA-SHA1, C14N 1.0,
unprefixed Signature) and its signed bytes are embedded TEXTUALLY in the envEvento (re-serialising
would change what the signature covers); the whole envEvento is validated against the official
XSD before it is sent. The AN's own action ``nfeRecepcaoEventoNF`` is used; answers wrapped in
``nfeRecepcaoEventoNFResult`` or ``nfeResultMsg`` are both read. Each ``retEvento`` is kept as the
bytes the AN sent, and :func:`proc_evento_nfe` assembles the ``procEventoNFe`` to store.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from xml.sax.saxutils import escape

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lxml import etree

from app.certs.a1 import A1Certificate
from app.config.endpoints import NFE_NS, SOAP_BINDINGS, Service
from app.core import event_types
from app.core.clock import brasilia_iso
from app.core.cstat import EVENT_REGISTERED
from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey
from app.core.manifestation import InvalidManifestation, manifestation_type, validate_justification
from app.core.manifestation import event_id as core_event_id
from app.core.products import Environment
from app.fiscal.distribution import parse_datetime
from app.fiscal.errors import MalformedResponse, RequestInvalid
from app.fiscal.http import HttpClientFactory
from app.fiscal.schemas import Schema, SchemaInvalid, validate
from app.fiscal.soap import post_soap
from app.fiscal.xmldsig import (
    SignatureInvalid,
    SignedElementNotFound,
    extract_signed_element,
    sefaz_signature_element,
    sha1_digest,
    sign_with_a1,
)
from app.safexml import XmlRejected, parse_xml

C_ORGAO_AN = "91"
MAX_EVENTS_PER_LOT = 20
RESULT_ELEMENT = "retEnvEvento"
_ALNUM_REFUSAL = "o leiaute do evento de manifestação ainda não aceita CNPJ alfanumérico"
_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>'


class Manifestation(StrEnum):
    """The four recipient manifestations; the value is ``tpEvento``."""

    CONFIRMACAO = event_types.CONFIRMACAO
    CIENCIA = event_types.CIENCIA
    DESCONHECIMENTO = event_types.DESCONHECIMENTO
    NAO_REALIZADA = event_types.NAO_REALIZADA

    @property
    def description(self) -> str:
        """``descEvento``, exactly as the schema enumerates it."""
        return manifestation_type(self.value).desc_evento

    @property
    def label(self) -> str:
        """Name shown to the user."""
        return manifestation_type(self.value).label

    @property
    def conclusive(self) -> bool:
        return manifestation_type(self.value).conclusive


def _manifestation(tp_evento: Manifestation | str) -> Manifestation:
    try:
        return Manifestation(str(tp_evento))
    except ValueError:
        raise RequestInvalid(
            f"Tipo de evento de manifestação desconhecido: {tp_evento!r} (use 210200, 210210, 210220 ou 210240)."
        ) from None


def event_id(tp_evento: Manifestation | str, key: AccessKey | str, seq: int) -> str:
    """``ID`` + tpEvento + chNFe + nSeqEvento with 2 digits (54 characters); a mismatch gives 572."""
    try:
        return core_event_id(str(tp_evento), str(key), seq)
    except InvalidManifestation as error:
        raise RequestInvalid(error.message) from error


def _justification(kind: Manifestation, justification: str | None) -> str | None:
    try:
        return validate_justification(kind.value, justification)
    except InvalidManifestation as error:
        raise RequestInvalid(error.message) from error


def build_event(
    key: AccessKey | str,
    tp_evento: Manifestation | str,
    author: Cnpj | Cpf,
    seq: int,
    dh_evento: datetime,
    tp_amb: Environment | int,
    justification: str | None = None,
) -> bytes:
    """The unsigned ``<evento>`` (no XML declaration); raises :class:`RequestInvalid` on bad input."""
    kind = _manifestation(tp_evento)
    try:
        access_key = key if isinstance(key, AccessKey) else AccessKey.parse(key)
    except InvalidIdentifier as exc:
        raise RequestInvalid(exc.message) from exc
    if isinstance(author, Cnpj) and author.is_alphanumeric:
        raise RequestInvalid(
            f"Manifestação não enviada para a empresa {author.formatted()}: {_ALNUM_REFUSAL} (o esquema oficial "
            "do evento só aceita CNPJ numérico)."
        )
    if not access_key.value.isdigit():
        raise RequestInvalid(
            f"Manifestação não enviada para a chave {access_key}: {_ALNUM_REFUSAL} (a chave traz o CNPJ "
            "alfanumérico do emitente e o esquema oficial do evento só aceita chave numérica)."
        )
    if access_key.model != "55":
        raise RequestInvalid(f"A manifestação do destinatário só existe para NF-e modelo 55 (chave {access_key}).")
    if not 1 <= seq <= 99:
        raise RequestInvalid(f"Número de sequência do evento inválido: {seq} (de 1 a 99).")
    if dh_evento.tzinfo is None:
        raise RequestInvalid("A data e hora do evento precisa de fuso horário.")
    amb = int(tp_amb)
    if amb not in (1, 2):
        raise RequestInvalid(f"Ambiente inválido: {tp_amb!r} (1 produção, 2 homologação).")
    just = _justification(kind, justification)
    who = f"<CNPJ>{author.value}</CNPJ>" if isinstance(author, Cnpj) else f"<CPF>{author.value}</CPF>"
    just_xml = f"<xJust>{escape(just)}</xJust>" if just is not None else ""
    return (
        f'<evento xmlns="{NFE_NS}" versao="1.00"><infEvento Id="{event_id(kind, access_key, seq)}">'
        f"<cOrgao>{C_ORGAO_AN}</cOrgao><tpAmb>{amb}</tpAmb>{who}<chNFe>{access_key}</chNFe>"
        f"<dhEvento>{brasilia_iso(dh_evento)}</dhEvento><tpEvento>{kind.value}</tpEvento>"
        f"<nSeqEvento>{seq}</nSeqEvento><verEvento>1.00</verEvento>"
        f'<detEvento versao="1.00"><descEvento>{kind.description}</descEvento>{just_xml}</detEvento>'
        "</infEvento></evento>"
    ).encode()


def sign_event(evento: bytes, a1: A1Certificate) -> bytes:
    """``evento`` signed with the company's A1 (SEFAZ profile); keep and embed these exact bytes."""
    root = parse_xml(evento)
    inf = root.find(f"{{{NFE_NS}}}infEvento")
    reference = inf.get("Id") if inf is not None else None
    if not reference:
        raise RequestInvalid("Evento sem infEvento/@Id: não pode ser assinado.")
    try:
        return sign_with_a1(evento, reference, a1)
    except SignatureInvalid as exc:
        raise RequestInvalid(f"Não foi possível assinar o evento: {exc.message}") from exc


def prepare_event(a1: A1Certificate, evento: bytes) -> bytes:
    """:func:`sign_event` of a :func:`build_event`: the signed ``evento`` bytes ready for :meth:`send`.

    The same bytes :func:`sign_event` gives, written directly: the event is our own text, so its
    canonical form is known without parsing it, and only the RSA signature is left to compute.
    """
    if not isinstance(a1.private_key, rsa.RSAPrivateKey):
        raise RequestInvalid("A chave privada do certificado A1 não é RSA; os eventos exigem assinatura RSA-SHA1.")
    return _sign_built_event(evento, a1.private_key, _cert_base64(a1.certificate))


# --- the SEFAZ signature of an event we built (xmldsig profile SEFAZ_SHA1, as sign_enveloped) ---

_EVENTO_OPEN = f'<evento xmlns="{NFE_NS}" versao="1.00">'.encode()
_EVENTO_CLOSE = b"</evento>"
_INF_OPEN = b"<infEvento "


@functools.lru_cache(maxsize=256)
def _cert_base64(certificate: x509.Certificate) -> str:
    """KeyInfo's X509Certificate: the DER on one line (a company's A1 is loaded once)."""
    return base64.b64encode(certificate.public_bytes(serialization.Encoding.DER)).decode("ascii")


def _sign_built_event(evento: bytes, private_key: rsa.RSAPrivateKey, cert_b64: str) -> bytes:
    """``sign_event`` of an event from :func:`build_event`.

    Its text is already canonical (no declaration, no whitespace between elements, no empty
    element, text escaped as C14N escapes it) but for the namespace infEvento inherits: digest,
    SignedInfo and RSA-SHA1 (PKCS#1 v1.5, deterministic) then give the bytes signxml gives.
    """
    if not (evento.startswith(_EVENTO_OPEN + _INF_OPEN) and evento.endswith(b"</infEvento>" + _EVENTO_CLOSE)):
        raise RequestInvalid("Evento fora do formato montado por build_event: não pode ser assinado aqui.")
    inf = evento[len(_EVENTO_OPEN) : -len(_EVENTO_CLOSE)]
    reference = inf[len(_INF_OPEN) :].split(b'"', 2)[1].decode("ascii")
    canonical_inf = b"<infEvento " + f'xmlns="{NFE_NS}" '.encode() + inf[len(_INF_OPEN) :]
    signature = sefaz_signature_element(reference, sha1_digest(canonical_inf), private_key, cert_b64)
    return evento[: -len(_EVENTO_CLOSE)] + signature.encode("ascii") + _EVENTO_CLOSE


def _strip_declaration(data: bytes) -> bytes:
    stripped = data.strip()
    if stripped.startswith(b"<?xml"):
        return stripped[stripped.index(b"?>") + 2 :].lstrip()
    return stripped


def env_evento(signed_events: Sequence[bytes], id_lote: int) -> bytes:
    """The ``envEvento`` lot (signed events embedded as bytes), validated against envConfRecebto 1.00."""
    return _validated_lot(signed_events, id_lote)[0]


def _validated_lot(signed_events: Sequence[bytes], id_lote: int) -> tuple[bytes, etree._Element]:
    """:func:`env_evento` and the tree it was validated on."""
    if not signed_events:
        raise RequestInvalid("Lote de eventos vazio.")
    if len(signed_events) > MAX_EVENTS_PER_LOT:
        raise RequestInvalid(f"Um lote aceita no máximo {MAX_EVENTS_PER_LOT} eventos ({len(signed_events)} dados).")
    if not 0 <= id_lote < 10**15:
        raise RequestInvalid(f"Identificador de lote inválido: {id_lote} (até 15 dígitos).")
    body = b"".join(_strip_declaration(event) for event in signed_events)
    lot = f'<envEvento xmlns="{NFE_NS}" versao="1.00"><idLote>{id_lote}</idLote>'.encode() + body + b"</envEvento>"
    try:
        tree = parse_xml(lot)
        validate(tree, Schema.MDE_ENV_EVENTO)
    except XmlRejected as exc:
        raise RequestInvalid(f"Lote de manifestação ilegível: {exc.message}") from exc
    except SchemaInvalid as exc:
        raise RequestInvalid(f"Lote de manifestação recusado antes do envio: {exc.message}", errors=exc.errors) from exc
    return lot, tree


# --- answers -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventResult:
    """One ``retEvento``: the outcome of one event, with the exact bytes the AN sent."""

    key: str
    tp_evento: str
    seq: int | None
    cstat: int
    xmotivo: str
    protocol: str | None
    dh_reg_evento: datetime | None
    ret_evento_bytes: bytes = field(repr=False)

    @property
    def registered(self) -> bool:
        """135 (linked to the NF-e) or 136 (registered, NF-e not yet at the AN). 573 is a duplicate."""
        return self.cstat in EVENT_REGISTERED


@dataclass(frozen=True)
class EventReply:
    """A ``retEnvEvento``: the lot's status (128 when processed) and one result per event."""

    lot_cstat: int
    lot_xmotivo: str
    id_lote: str
    tp_amb: int | None
    ver_aplic: str
    results: tuple[EventResult, ...]
    request_bytes: bytes = field(repr=False)
    response_bytes: bytes = field(repr=False)
    elapsed_ms: float = 0.0
    http_status: int = 200

    def result_for(self, key: AccessKey | str, tp_evento: Manifestation | str, seq: int) -> EventResult | None:
        for result in self.results:
            if result.key == str(key) and result.tp_evento == str(tp_evento) and result.seq == seq:
                return result
        return None


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _texts(element: etree._Element | None) -> dict[str, str]:
    """Child texts by local name (first wins), any namespace."""
    out: dict[str, str] = {}
    if element is None:
        return out
    for child in element:
        name = _local(child)
        if name and name not in out:
            out[name] = (child.text or "").strip()
    return out


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isascii() and text.isdigit() else None


def parse_ret_env_evento(
    ret_env: etree._Element,
    response_bytes: bytes,
    *,
    request_bytes: bytes = b"",
    elapsed_ms: float = 0.0,
    http_status: int = 200,
) -> EventReply:
    """An :class:`EventReply` from a ``retEnvEvento`` element and the bytes it was parsed from."""
    lot = _texts(ret_env)
    lot_cstat = _int(lot.get("cStat"))
    if lot_cstat is None:
        raise MalformedResponse("Resposta da recepção de eventos sem cStat legível.")
    results: list[EventResult] = []
    ret_events = [child for child in ret_env if _local(child) == "retEvento"]
    for index, ret in enumerate(ret_events):
        inf = next((child for child in ret if _local(child) == "infEvento"), None)
        fields = _texts(inf)
        cstat = _int(fields.get("cStat"))
        if cstat is None:
            raise MalformedResponse("Resultado de evento sem cStat legível na resposta.")
        try:
            raw = extract_signed_element(response_bytes, "retEvento", index=index)
        except SignedElementNotFound:
            raw = etree.tostring(ret, encoding="UTF-8")
        results.append(
            EventResult(
                key=fields.get("chNFe", ""),
                tp_evento=fields.get("tpEvento", ""),
                seq=_int(fields.get("nSeqEvento")),
                cstat=cstat,
                xmotivo=fields.get("xMotivo", ""),
                protocol=fields.get("nProt") or None,
                dh_reg_evento=parse_datetime(fields.get("dhRegEvento")),
                ret_evento_bytes=raw,
            )
        )
    return EventReply(
        lot_cstat=lot_cstat,
        lot_xmotivo=lot.get("xMotivo", ""),
        id_lote=lot.get("idLote", ""),
        tp_amb=_int(lot.get("tpAmb")),
        ver_aplic=lot.get("verAplic", ""),
        results=tuple(results),
        request_bytes=request_bytes,
        response_bytes=response_bytes,
        elapsed_ms=elapsed_ms,
        http_status=http_status,
    )


class ManifestationClient:
    """Sends manifestation lots to NFeRecepcaoEvento4 at the Ambiente Nacional."""

    def __init__(self, http_client: httpx.Client, url: str, environment: Environment) -> None:
        self.http_client = http_client
        self.url = url
        self.environment = environment
        self.binding = SOAP_BINDINGS[Service.NFE_RECEPCAO_EVENTO]

    @classmethod
    def from_factory(
        cls, factory: HttpClientFactory, a1: A1Certificate, environment: Environment
    ) -> ManifestationClient:
        service = Service.NFE_RECEPCAO_EVENTO
        return cls(factory.client(a1, service, environment), factory.url(service, environment), environment)

    def send(self, signed_events: Sequence[bytes], id_lote: int) -> EventReply:
        """Validate and send one lot; raises RequestInvalid (nothing sent) or CommunicationError."""
        lot, tree = _validated_lot(signed_events, id_lote)  # one parse for the schema and the check
        for amb in tree.iterfind(f"{{{NFE_NS}}}evento/{{{NFE_NS}}}infEvento/{{{NFE_NS}}}tpAmb"):
            if amb.text != str(int(self.environment)):
                raise RequestInvalid(
                    f"Evento com tpAmb={amb.text} enviado ao ambiente {self.environment.label}: seria rejeitado (252)."
                )
        reply = post_soap(self.http_client, self.url, self.binding, lot, expect=RESULT_ELEMENT)
        try:
            return parse_ret_env_evento(
                reply.element,
                reply.content,
                request_bytes=reply.request,
                elapsed_ms=reply.elapsed_ms,
                http_status=reply.status,
            )
        except MalformedResponse as exc:
            exc.url = self.url
            raise


def proc_evento_nfe(signed_evento: bytes, ret_evento: bytes) -> bytes:
    """The ``procEventoNFe`` 1.00 to store: the signed evento and the AN's retEvento, both byte-exact.

    Validated against procConfRecebtoNFe 1.00; raises :class:`app.fiscal.schemas.SchemaInvalid`.
    """
    proc = (
        _DECLARATION
        + f'<procEventoNFe xmlns="{NFE_NS}" versao="1.00">'.encode()
        + _strip_declaration(signed_evento)
        + _strip_declaration(ret_evento)
        + b"</procEventoNFe>"
    )
    validate(proc, Schema.MDE_PROC_EVENTO)
    return proc
