"""What the NFS-e reader (:mod:`app.documents.nfse`) gives: plain frozen dataclasses, the codes
and labels of the NFS-e Nacional, and who the company is in a note.

No XML objects inside: engines, threads and the UI hold them freely; :func:`to_json_dict` makes
them JSON. Kinds, roles, status and direction are the domain's enums (``app.core.documents``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import Any

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.core.event_types import NFSE_CANCELLATION_BY_SUBSTITUTION, NFSE_CANCELLING
from app.core.ids import Cnpj, Cpf
from app.documents.model import EventHead, PartyInfo, UnknownMeta

# cStat of infNFSe (protocol.md §4.7): all of them are a generated, valid NFS-e.
CSTAT_LABELS = {
    "100": "NFS-e gerada",
    "101": "NFS-e de substituição gerada",
    "102": "NFS-e gerada por decisão judicial",
    "103": "NFS-e avulsa gerada",
    "107": "NFS-e de MEI gerada",
}
# Event codes that end an NFS-e's validity, and the one that names its substitute.
CANCELLING_EVENTS = NFSE_CANCELLING
SUBSTITUTION_EVENT = NFSE_CANCELLATION_BY_SUBSTITUTION
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
class NfseEventMeta(EventHead):
    """A registered ``evento`` or a bare ``pedRegEvento``, linked to its NFS-e by ``access_key``.

    ``substitute_key`` is chSubstituta of a substitution (105102); ``reason_code``/``reason`` are
    cMotivo/xMotivo (cancellations, rejections). ``registered_at`` is the evento's dhProc
    (None for a bare pedRegEvento, which is only a request).
    """

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
