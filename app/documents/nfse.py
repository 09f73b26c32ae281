"""Read one NFS-e Nacional document or event into metadata (rule book §6.4, protocol.md §4.5-4.8).

Roots (namespace ``http://www.sped.fazenda.gov.br/nfse``): ``NFSe`` (the authorised note, with the
provider's ``DPS`` inside), a bare ``DPS``, the registered ``evento`` (wrapping the author's
``pedRegEvento``) and a bare ``pedRegEvento``; ``CNC`` and any other root come back as
``UnknownMeta`` (kept and shown, never dropped). Tolerant like the NF-e and CT-e readers: a
faulty CNPJ or a key out of its layout is a warning, because the government distributed it;
alphanumeric CNPJs are accepted in keys and parties (protocol.md §4.8: validate keys leniently).

    meta = read_nfse(xml_bytes)                  # XML already inflated
    meta = read_nfse_payload(arquivo_xml_b64)    # the ADN's ArquivoXml: base64(gzip(xml))
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import replace
from datetime import date
from typing import Any

from lxml import etree

from app.core.documents import DocumentKind, DocumentStatus, PartyRole
from app.documents.classify import split_tag
from app.documents.kids import Kids
from app.documents.model import DocumentDataError, UnknownMeta
from app.documents.nfse_model import (
    CANCELLING_EVENTS,
    CSTAT_LABELS,
    EVENT_LABELS,
    ISS_RETENTION_LABELS,
    SUBSTITUTION_EVENT,
    NfseDocument,
    NfseEventMeta,
    NfseIbsCbs,
    NfseMeta,
    NfseParty,
    direction_of_nfse,
    to_json_dict,
)
from app.documents.values import dated, party_doc, to_cents, to_int
from app.safexml import CorruptPayload, inflate, parse_xml

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
_P = f"{{{NFSE_NS}}}"
# An NFS-e a few hundred KB at most; the bound only stops a gzip bomb.
MAX_INFLATED = 20 * 1024 * 1024

__all__ = [  # the reader and what it gives (app.documents.nfse_model), from one place
    "CANCELLING_EVENTS",
    "CSTAT_LABELS",
    "EVENT_LABELS",
    "ISS_RETENTION_LABELS",
    "NFSE_NS",
    "SUBSTITUTION_EVENT",
    "NfseDocument",
    "NfseEventMeta",
    "NfseIbsCbs",
    "NfseMeta",
    "NfseParty",
    "decode_payload",
    "direction_of_nfse",
    "read_nfse",
    "read_nfse_payload",
    "read_nfse_root",
    "to_json_dict",
]
_KEY = re.compile(r"[0-9]{9}[0-9A-Z]{14}[0-9]{27}")
_EVENT_GROUP = re.compile(r"e([0-9]{6})")


# ---------------------------------------------------------------- entry points


def decode_payload(arquivo_xml: str | bytes) -> bytes:
    """The ADN's ``ArquivoXml`` (base64 of the gzip'd XML) → the XML bytes, exactly as issued.

    Raises ``CorruptPayload`` (bad base64 or gzip) or ``TooLarge``.
    """
    text = arquivo_xml.encode("ascii", "replace") if isinstance(arquivo_xml, str) else arquivo_xml
    try:
        packed = base64.b64decode(b"".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as error:
        raise CorruptPayload(
            "Conteúdo do documento do ADN ilegível: o base64 está corrompido.", reason="corrupt_base64"
        ) from error
    return inflate(packed, max_output=MAX_INFLATED)


def read_nfse_payload(arquivo_xml: str | bytes) -> NfseDocument:
    """Metadata of one ADN ``ArquivoXml``: base64 → gunzip → the one safe parser."""
    return read_nfse(decode_payload(arquivo_xml))


def read_nfse(data: bytes) -> NfseDocument:
    """Metadata of one NFS-e document or event; ``UnknownMeta`` for anything else (CNC included).

    Raises ``XmlRejected`` for bytes that are not acceptable XML (not well formed, DOCTYPE...) and
    ``DocumentDataError`` for an NFS-e without its identifying groups.
    """
    return read_nfse_root(parse_xml(data))


def read_nfse_root(root: etree._Element) -> NfseDocument:
    tag = root.tag if isinstance(root.tag, str) else ""
    namespace, local = split_tag(tag)
    version = root.get("versao")
    if namespace == NFSE_NS:
        if local == "NFSe":
            return _nfse(root, version)
        if local == "DPS":
            return _dps_only(root, version)
        if local == "evento":
            return _evento(root, version)
        if local == "pedRegEvento":
            return _ped_reg(root, version, registered=False, warnings=[])
    return UnknownMeta(root=local, namespace=namespace, version=version)


# ---------------------------------------------------------------- helpers


class _Kids(Kids):
    """An NFS-e container's children (``app.documents.kids``), with its money reader."""

    __slots__ = ()
    PREFIX = _P

    def kids(self, *path: str) -> _Kids:
        current = self
        for name in path:
            found = current.get(name)
            current = _Kids(found) if found is not None else _NONE
        return current

    def cents(self, name: str, warnings: list[str]) -> int | None:
        text = self.text(name)
        value = to_cents(text)
        if value is None and text:
            warnings.append(f"Valor ilegível em {name}: {text!r}.")
        return value


_NONE = _Kids(None)  # every missing group reads as this one (nothing to iterate, nothing to build)


def _day(text: str, what: str, warnings: list[str]) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        warnings.append(f"{what} ilegível: {text!r}.")
        return None


_ROLE_LABEL = {
    PartyRole.EMITTER: "Prestador",
    PartyRole.TAKER: "Tomador",
    PartyRole.INTERMEDIARY: "Intermediário",
}


def _party(element: etree._Element | None, role: PartyRole, warnings: list[str]) -> NfseParty | None:
    if element is None:
        return None
    kids = _Kids(element)
    doc = party_doc(kids.text("CNPJ"), kids.text("CPF"), _ROLE_LABEL[role], warnings)
    address = kids.kids("enderNac")
    if address.element is None:
        address = kids.kids("end", "endNac")
    return NfseParty(
        role=role,
        doc=doc,
        name=kids.opt("xNome"),
        municipal_registration=kids.opt("IM"),
        nif=kids.opt("NIF"),
        no_nif_reason=kids.opt("cNaoNIF"),
        municipality=address.opt("cMun"),
        uf=address.opt("UF"),
        email=kids.opt("email"),
    )


def _merged(emitter: NfseParty | None, provider: NfseParty | None) -> NfseParty | None:
    """The prest of the DPS completed by the NFS-e's emit (the DPS often omits xNome)."""
    if provider is None or emitter is None:
        return provider
    return NfseParty(
        role=provider.role,
        doc=provider.doc or emitter.doc,
        name=provider.name or emitter.name,
        municipal_registration=provider.municipal_registration or emitter.municipal_registration,
        nif=provider.nif,
        no_nif_reason=provider.no_nif_reason,
        municipality=provider.municipality or emitter.municipality,
        uf=provider.uf or emitter.uf,
        email=provider.email or emitter.email,
    )


def _key(text: str, warnings: list[str]) -> str:
    """The 50-character key from an Id (``NFS`` + key) or a chNFSe, checked leniently."""
    key = text.strip().upper()
    if key.startswith("NFS"):
        key = key[3:]
    if not key:
        raise DocumentDataError("NFS-e sem chave de acesso (infNFSe/@Id).")
    if len(key) != 50 or not _KEY.fullmatch(key):
        warnings.append(f"Chave de acesso fora do padrão de 50 caracteres: {key}.")
    return key


# ---------------------------------------------------------------- NFS-e and DPS


def _nfse(root: etree._Element, version: str | None) -> NfseMeta:
    warnings: list[str] = []
    inf_element = root.find(_P + "infNFSe")
    if inf_element is None:
        raise DocumentDataError("<NFSe> sem o grupo infNFSe.")
    inf = _Kids(inf_element)
    key = _key(inf_element.get("Id") or "", warnings)
    dps_element = inf.get("DPS")
    dps = _Kids(dps_element).kids("infDPS")
    if dps.element is None:
        warnings.append("NFS-e sem a DPS (infDPS): prestador, tomador e serviço não lidos.")
    emitter = _party(inf.get("emit"), PartyRole.EMITTER, warnings)
    values = inf.kids("valores")
    cstat = inf.opt("cStat")
    base = _dps_fields(dps, warnings, emitter)
    return NfseMeta(
        kind=DocumentKind.NFSE,
        root="NFSe",
        version=version,
        access_key=key,
        number=to_int(inf.text("nNFSe")),
        processed_at=dated(inf.text("dhProc"), "Data de processamento", warnings),
        cstat=cstat,
        emitter=emitter,
        national_description=inf.opt("xTribNac"),
        incidence_code=inf.opt("cLocIncid"),
        incidence_name=inf.opt("xLocIncid"),
        net_cents=values.cents("vLiq", warnings),
        base_cents=values.cents("vBC", warnings),
        iss_rate=values.opt("pAliqAplic"),
        iss_cents=values.cents("vISSQN", warnings),
        retained_cents=values.cents("vTotalRet", warnings),
        ibscbs=_ibscbs(inf.kids("IBSCBS"), dps.kids("IBSCBS"), warnings),
        status=DocumentStatus.AUTHORISED if cstat in CSTAT_LABELS else DocumentStatus.UNKNOWN,
        warnings=tuple(dict.fromkeys(warnings)),  # emit and prest name the same provider
        **base,
    )


def _dps_only(root: etree._Element, version: str | None) -> NfseMeta:
    warnings: list[str] = []
    dps = _Kids(root).kids("infDPS")
    if dps.element is None:
        raise DocumentDataError("<DPS> sem o grupo infDPS.")
    base = _dps_fields(dps, warnings, None)
    return NfseMeta(
        kind=DocumentKind.DPS,
        root="DPS",
        version=version,
        access_key=None,
        number=None,
        processed_at=None,
        cstat=None,
        emitter=None,
        ibscbs=_ibscbs(_Kids(None), dps.kids("IBSCBS"), warnings),
        warnings=tuple(warnings),
        **base,
    )


def _dps_fields(dps: _Kids, warnings: list[str], emitter: NfseParty | None) -> dict[str, Any]:
    service = dps.kids("serv")
    code = service.kids("cServ")
    values = dps.kids("valores")
    trib = values.kids("trib")
    provider = _merged(emitter, _party(dps.get("prest"), PartyRole.EMITTER, warnings))
    substituted = dps.kids("subst").text("chSubstda").upper() or None
    return {
        "dps_id": (dps.element.get("Id") if dps.element is not None else None) or None,
        "dps_number": to_int(dps.text("nDPS")),
        "serie": dps.opt("serie"),
        "issued_at": dated(dps.text("dhEmi"), "Data de emissão", warnings),
        "competence": _day(dps.text("dCompet"), "Data de competência", warnings),
        "environment": to_int(dps.text("tpAmb")),
        "provider": provider,
        "taker": _party(dps.get("toma"), PartyRole.TAKER, warnings),
        "intermediary": _party(dps.get("interm"), PartyRole.INTERMEDIARY, warnings),
        "issuer_type": dps.opt("tpEmit"),
        "national_code": code.opt("cTribNac"),
        "municipal_code": code.opt("cTribMun"),
        "nbs": code.opt("cNBS"),
        "description": code.opt("xDescServ"),
        "place_code": service.kids("locPrest").opt("cLocPrestacao"),
        "service_cents": values.kids("vServPrest").cents("vServ", warnings),
        "iss_retention": trib.kids("tribMun").opt("tpRetISSQN"),
        "retentions": _federal_retentions(trib.kids("tribFed"), warnings),
        "replaced_key": substituted,
    }


def _federal_retentions(fed: _Kids, warnings: list[str]) -> tuple[tuple[str, int], ...]:
    found: list[tuple[str, int]] = []
    for name in ("vRetCP", "vRetIRRF", "vRetCSLL"):
        value = fed.cents(name, warnings)
        if value is not None:
            found.append((name, value))
    piscofins = fed.kids("piscofins")
    if piscofins.text("tpRetPisCofins") in ("1", "3", "4", "5"):  # withheld (all or part)
        for name in ("vPis", "vCofins"):
            value = piscofins.cents(name, warnings)
            if value is not None:
                found.append((name, value))
    return tuple(found)


def _ibscbs(nfse_group: _Kids, dps_group: _Kids, warnings: list[str]) -> NfseIbsCbs | None:
    if nfse_group.element is None and dps_group.element is None:
        return None
    values = nfse_group.kids("valores")
    totals = nfse_group.kids("totCIBS")
    ibs = totals.kids("gIBS")
    gibscbs = dps_group.kids("valores", "trib", "gIBSCBS")
    return NfseIbsCbs(
        locality_code=nfse_group.opt("cLocalidadeIncid"),
        locality_name=nfse_group.opt("xLocalidadeIncid"),
        reduction_rate=nfse_group.opt("pRedutor"),
        base_cents=values.cents("vBC", warnings),
        ibs_uf_rate=values.kids("uf").opt("pIBSUF"),
        ibs_mun_rate=values.kids("mun").opt("pIBSMun"),
        cbs_rate=values.kids("fed").opt("pCBS"),
        total_cents=totals.cents("vTotNF", warnings),
        ibs_cents=ibs.cents("vIBSTot", warnings),
        ibs_uf_cents=ibs.kids("gIBSUFTot").cents("vIBSUF", warnings),
        ibs_mun_cents=ibs.kids("gIBSMunTot").cents("vIBSMun", warnings),
        cbs_cents=totals.kids("gCBS").cents("vCBS", warnings),
        cst=gibscbs.opt("CST"),
        class_code=gibscbs.opt("cClassTrib"),
        operation_code=dps_group.opt("cIndOp"),
    )


# ---------------------------------------------------------------- events


def _evento(root: etree._Element, version: str | None) -> NfseEventMeta:
    warnings: list[str] = []
    inf = _Kids(root.find(_P + "infEvento"))
    if inf.element is None:
        raise DocumentDataError("<evento> sem o grupo infEvento.")
    ped = inf.get("pedRegEvento")
    if ped is None:
        raise DocumentDataError("Evento de NFS-e sem o pedido de registro (pedRegEvento).")
    event = _ped_reg(ped, version, registered=True, warnings=warnings)
    seq = to_int(inf.text("nSeqEvento"))
    event_id = inf.element.get("Id") or None
    if seq is None and event_id and event_id[-3:].isdigit():
        seq = int(event_id[-3:])
    return replace(
        event,
        root="evento",
        n_seq_evento=seq if seq is not None else 1,
        registered_at=dated(inf.text("dhProc"), "Data de registro do evento", warnings),
        event_id=event_id,
        warnings=tuple(warnings),
    )


def _ped_reg(root: etree._Element, version: str | None, *, registered: bool, warnings: list[str]) -> NfseEventMeta:
    inf = _Kids(root.find(_P + "infPedReg"))
    if inf.element is None:
        raise DocumentDataError("<pedRegEvento> sem o grupo infPedReg.")
    key = inf.text("chNFSe").upper()
    if not key:
        raise DocumentDataError("Evento de NFS-e sem a chave da NFS-e (chNFSe).")
    key = _key(key, warnings)
    group_name = next((name for name in inf.names() if _EVENT_GROUP.fullmatch(name)), None)
    if group_name is None:
        raise DocumentDataError(f"Evento da NFS-e {key} sem o grupo do tipo de evento (e101101, e203202...).")
    code = group_name[1:]
    group = inf.kids(group_name)
    reasons = group.kids("infRej") if group.get("infRej") is not None else group
    substitute = group.text("chSubstituta").upper() or None
    if code == SUBSTITUTION_EVENT and substitute is None:
        warnings.append(f"Cancelamento por substituição da NFS-e {key} sem a chave substituta (chSubstituta).")
    return NfseEventMeta(
        kind=DocumentKind.NFSE_EVENTO,
        root="pedRegEvento",
        version=version,
        access_key=key,
        tp_evento=code,
        n_seq_evento=1,
        description=group.opt("xDesc") or EVENT_LABELS.get(code),
        author_doc=(inf.text("CNPJAutor") or inf.text("CPFAutor")).upper() or None,
        event_at=dated(inf.text("dhEvento"), "Data do evento", warnings),
        registered_at=None,
        environment=to_int(inf.text("tpAmb")),
        event_id=inf.element.get("Id") if inf.element is not None else None,
        reason_code=reasons.opt("cMotivo"),
        reason=reasons.opt("xMotivo"),
        substitute_key=substitute,
        registered=registered,
        warnings=tuple(warnings),
    )
