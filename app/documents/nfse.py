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
from dataclasses import dataclass, fields, replace
from datetime import date, datetime
from typing import Any

from lxml import etree

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.core.ids import Cnpj, Cpf
from app.documents.classify import split_tag
from app.documents.kids import Kids
from app.documents.model import DocumentDataError, PartyInfo, UnknownMeta
from app.documents.values import tax_id_problem, to_cents, to_datetime, to_int
from app.safexml import CorruptPayload, inflate, parse_xml

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
_P = f"{{{NFSE_NS}}}"
# An NFS-e a few hundred KB at most; the bound only stops a gzip bomb.
MAX_INFLATED = 20 * 1024 * 1024

# cStat of infNFSe (protocol.md §4.7): all of them are a generated, valid NFS-e.
CSTAT_LABELS = {
    "100": "NFS-e gerada",
    "101": "NFS-e de substituição gerada",
    "102": "NFS-e gerada por decisão judicial",
    "103": "NFS-e avulsa gerada",
    "107": "NFS-e de MEI gerada",
}
# Event codes that end an NFS-e's validity, and the one that names its substitute.
CANCELLING_EVENTS = frozenset({"101101", "105102", "105104", "305101"})
SUBSTITUTION_EVENT = "105102"
EVENT_LABELS = {
    "101101": "Cancelamento de NFS-e",
    "101103": "Solicitação de Análise Fiscal para Cancelamento de NFS-e",
    "105102": "Cancelamento de NFS-e por Substituição",
    "105104": "Cancelamento de NFS-e Deferido por Análise Fiscal",
    "105105": "Cancelamento de NFS-e Indeferido por Análise Fiscal",
    "202201": "Confirmação do Prestador",
    "203202": "Confirmação do Tomador",
    "204203": "Confirmação do Intermediário",
    "205204": "Confirmação Tácita",
    "202205": "Rejeição do Prestador",
    "203206": "Rejeição do Tomador",
    "204207": "Rejeição do Intermediário",
    "205208": "Anulação da Rejeição",
    "305101": "Cancelamento de NFS-e por Ofício",
    "305102": "Bloqueio de NFS-e por Ofício",
    "305103": "Desbloqueio de NFS-e por Ofício",
}
# tpRetISSQN: who withholds the ISSQN.
ISS_RETENTION_LABELS = {"1": "Não retido", "2": "Retido pelo tomador", "3": "Retido pelo intermediário"}
_KEY = re.compile(r"[0-9]{9}[0-9A-Z]{14}[0-9]{27}")
_EVENT_GROUP = re.compile(r"e([0-9]{6})")


# ---------------------------------------------------------------- metadata


@dataclass(frozen=True, slots=True)
class NfseParty:
    """One party of an NFS-e. ``doc`` is the CNPJ (14, upper case) or CPF (11); a foreigner has
    ``nif`` (or ``no_nif_reason``, cNaoNIF) instead. ``municipal_registration`` is the IM."""

    role: PartyRole
    doc: str | None
    name: str | None = None
    municipal_registration: str | None = None
    nif: str | None = None
    no_nif_reason: str | None = None
    municipality: str | None = None  # cMun of its national address
    uf: str | None = None
    email: str | None = None

    @property
    def doc_type(self) -> str | None:
        """The kind of identifier: "CNPJ", "CPF", "NIF" or None."""
        if self.doc:
            return "CPF" if len(self.doc) == 11 else "CNPJ"
        return "NIF" if self.nif else None

    def info(self) -> PartyInfo:
        return PartyInfo(self.role, self.doc, self.name, None, self.uf, self.nif)


@dataclass(frozen=True, slots=True)
class NfseIbsCbs:
    """The IBS/CBS group of the tax reform (NFSe/infNFSe/IBSCBS), values in centavos, rates as
    written (percent text, e.g. "0.90")."""

    locality_code: str | None  # cLocalidadeIncid
    locality_name: str | None
    reduction_rate: str | None  # pRedutor
    base_cents: int | None  # valores/vBC
    ibs_uf_rate: str | None  # pIBSUF
    ibs_mun_rate: str | None  # pIBSMun
    cbs_rate: str | None  # pCBS
    total_cents: int | None  # totCIBS/vTotNF
    ibs_cents: int | None  # gIBS/vIBSTot
    ibs_uf_cents: int | None
    ibs_mun_cents: int | None
    cbs_cents: int | None  # gCBS/vCBS
    cst: str | None = None  # from the DPS's gIBSCBS
    class_code: str | None = None  # cClassTrib
    operation_code: str | None = None  # cIndOp


@dataclass(frozen=True, slots=True)
class NfseMeta:
    """An NFS-e (``NFSe``: ``access_key`` is the 50-character key) or a bare ``DPS`` (no key:
    ``access_key`` is None and ``dps_id`` identifies it).

    Values in centavos, exact from the decimal text. ``service_cents`` is the DPS's vServ,
    ``net_cents`` infNFSe's vLiq. ``issued_at`` is the DPS's dhEmi, ``processed_at`` the
    NFS-e's dhProc, ``competence`` dCompet. ``replaced_key`` is subst/chSubstda: the NFS-e this
    one replaces.
    """

    kind: DocumentKind
    root: str
    version: str | None
    access_key: str | None
    dps_id: str | None
    number: int | None  # nNFSe
    dps_number: int | None  # nDPS
    serie: str | None
    issued_at: datetime | None
    processed_at: datetime | None
    competence: date | None
    cstat: str | None
    environment: int | None  # tpAmb of the DPS: 1 produção, 2 homologação
    emitter: NfseParty | None  # emit: who the Sefin issued it for
    provider: NfseParty | None  # prest
    taker: NfseParty | None = None  # toma
    intermediary: NfseParty | None = None  # interm
    issuer_type: str | None = None  # tpEmit: 1 prestador, 2 tomador, 3 intermediário
    national_code: str | None = None  # cTribNac
    national_description: str | None = None  # xTribNac
    municipal_code: str | None = None  # cTribMun
    nbs: str | None = None  # cNBS
    description: str | None = None  # xDescServ
    place_code: str | None = None  # cLocPrestacao
    incidence_code: str | None = None  # cLocIncid
    incidence_name: str | None = None  # xLocIncid
    service_cents: int | None = None  # vServ
    net_cents: int | None = None  # vLiq
    base_cents: int | None = None  # vBC
    iss_rate: str | None = None  # pAliqAplic
    iss_cents: int | None = None  # vISSQN
    retained_cents: int | None = None  # vTotalRet
    iss_retention: str | None = None  # tpRetISSQN
    retentions: tuple[tuple[str, int], ...] = ()  # federal withholdings (vRetCP, vRetIRRF, ...)
    ibscbs: NfseIbsCbs | None = None
    replaced_key: str | None = None  # subst/chSubstda
    status: DocumentStatus = DocumentStatus.UNKNOWN
    warnings: tuple[str, ...] = ()

    @property
    def parties(self) -> tuple[NfseParty, ...]:
        """The prestador (emit, else prest), tomador and intermediário, those present."""
        provider = self.emitter or self.provider
        return tuple(p for p in (provider, self.taker, self.intermediary) if p is not None)

    @property
    def situation(self) -> str | None:
        return CSTAT_LABELS.get(self.cstat or "")


@dataclass(frozen=True, slots=True)
class NfseEventMeta:
    """A registered ``evento`` or a bare ``pedRegEvento``, linked to its NFS-e by ``access_key``.

    ``substitute_key`` is chSubstituta of a substitution (105102); ``reason_code``/``reason`` are
    cMotivo/xMotivo (cancellations, rejections). ``registered_at`` is the evento's dhProc
    (None for a bare pedRegEvento, which is only a request).
    """

    kind: DocumentKind
    root: str
    version: str | None
    access_key: str
    tp_evento: str
    n_seq_evento: int
    description: str | None
    author_doc: str | None
    event_at: datetime | None
    registered_at: datetime | None
    environment: int | None
    event_id: str | None
    reason_code: str | None = None
    reason: str | None = None
    substitute_key: str | None = None
    registered: bool = True  # False for a bare pedRegEvento
    warnings: tuple[str, ...] = ()

    @property
    def cancels(self) -> bool:
        return self.registered and self.tp_evento in CANCELLING_EVENTS


NfseDocument = NfseMeta | NfseEventMeta | UnknownMeta


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


def direction_of_nfse(company: str | Cnpj | Cpf, meta: NfseMeta) -> Direction:
    """Direction "emitted" only when the company is the prestador and neither tomador nor intermediário."""
    me = company.value if isinstance(company, Cnpj | Cpf) else company.strip().upper()
    roles = {party.role for party in meta.parties if party.doc == me}
    return Direction.EMITTED if roles == {PartyRole.EMITTER} else Direction.RECEIVED


def to_json_dict(meta: NfseMeta | NfseEventMeta | NfseParty | NfseIbsCbs) -> dict[str, Any]:
    """The dataclass as a dict ``json.dumps`` accepts (dates as ISO 8601)."""
    return {f.name: _plain(getattr(meta, f.name)) for f in fields(meta)}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, NfseParty | NfseIbsCbs):
        return to_json_dict(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


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


def _when(text: str, what: str, warnings: list[str]) -> datetime | None:
    value, as_written = to_datetime(text)
    if value is None and text:
        warnings.append(f"{what} ilegível: {text!r}.")
    elif not as_written:
        warnings.append(f"{what} sem fuso horário; lido como -03:00.")
    return value


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
    doc = (kids.text("CNPJ") or kids.text("CPF")).upper() or None
    if doc is not None:
        problem = tax_id_problem(doc)
        if problem is not None:
            warnings.append(f"{_ROLE_LABEL[role]}: {problem}")
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
        processed_at=_when(inf.text("dhProc"), "Data de processamento", warnings),
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
        "issued_at": _when(dps.text("dhEmi"), "Data de emissão", warnings),
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
        registered_at=_when(inf.text("dhProc"), "Data de registro do evento", warnings),
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
        event_at=_when(inf.text("dhEvento"), "Data do evento", warnings),
        registered_at=None,
        environment=to_int(inf.text("tpAmb")),
        event_id=inf.element.get("Id") if inf.element is not None else None,
        reason_code=reasons.opt("cMotivo"),
        reason=reasons.opt("xMotivo"),
        substitute_key=substitute,
        registered=registered,
        warnings=tuple(warnings),
    )
