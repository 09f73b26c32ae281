"""Plain values that cross the store's boundary: enums and frozen dataclasses.

No SQLAlchemy type appears here, so engines, the UI and other threads can hold these freely.
Enum values are what the database stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum

from app.core.cadence import CaptureState as CaptureState  # pure domain state, stored as is

# Re-exported: the store speaks the domain's enums.
from app.core.documents import Direction as Direction
from app.core.documents import DocumentKind as DocumentKind
from app.core.documents import DocumentStatus as DocumentStatus
from app.core.documents import PartyRole as PartyRole
from app.core.ids import Cnpj
from app.core.manifestation import ManifestationState as ManifestationState
from app.core.products import Environment as Environment
from app.core.products import Product as Product

# How complete a document version is: a fuller version becomes the current one, a poorer one
# (a resNFe fetched again after the nfeProc) only joins the history.
KIND_RANK: dict[DocumentKind, int] = {
    DocumentKind.UNKNOWN: 0,
    DocumentKind.RES_NFE: 1,
    DocumentKind.RES_EVENTO: 1,
    DocumentKind.DPS: 1,
    DocumentKind.NFE_PROC: 2,
    DocumentKind.CTE_PROC: 2,
    DocumentKind.NFSE: 2,
    DocumentKind.PROC_EVENTO_NFE: 2,
    DocumentKind.PROC_EVENTO_CTE: 2,
    DocumentKind.NFSE_EVENTO: 2,
}


class GapStatus(StrEnum):
    PENDING = "pending"
    RECOVERED = "recovered"
    NOT_FOUND = "not_found"  # 137 for that NSU: it never existed
    ABANDONED = "abandoned"  # attempts exhausted


class ManifestationStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"  # the app stopped while it ran


class CallOutcome(StrEnum):
    OK = "ok"  # the service answered (any cStat)
    REJECTED = "rejected"  # answered with a rejection
    HTTP_ERROR = "http_error"
    NETWORK_ERROR = "network_error"
    TIMEOUT = "timeout"


# ---------------------------------------------------------------- companies and settings


@dataclass(frozen=True, slots=True)
class Company:
    """A client company. The certificate itself never enters the database: only its reference."""

    id: int
    cnpj: Cnpj
    name: str
    certificate_ref: str | None
    active: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """Per company and product capture settings (rule book §4.1, §5.1, §6.1)."""

    company_id: int
    product: Product
    environment: Environment = Environment.PRODUCAO
    enabled: bool = True
    auto_ciencia: bool = False
    ciencia_wait_minutes: int = 5
    cte_event_types: tuple[str, ...] = ()  # empty: every event type notifies
    cte_party_roles: tuple[PartyRole, ...] = ()  # empty: every role notifies
    nfse_cutoff_date: date | None = None
    nfse_capture_own_issued: bool = False
    c_uf_autor: str | None = None
    # ``company set --product nfse --release-history``: documents before the cutoff are listed too
    nfse_history_released: bool = False


@dataclass(frozen=True, slots=True)
class ServicePause:
    """A global pause of one service (cStat 108/109) for every company."""

    product: Product
    environment: Environment
    paused_until: datetime
    reason: str
    cstat: str | None


# ---------------------------------------------------------------- documents and events


@dataclass(frozen=True, slots=True)
class Party:
    role: PartyRole
    tax_id: str | None  # CNPJ (14) or CPF (11); None for a foreign party
    name: str | None = None


class Withheld(StrEnum):
    """Why a stored NFS-e is not listed, notified or exported yet (rule book §6.1, §6.4 item 8)."""

    CUTOFF = "cutoff"  # issued before the company's cutoff date, history not released
    OWN_ISSUED = "own_issued"  # the company is only the prestador and that capture is off


@dataclass(frozen=True, slots=True)
class NfseDetails:
    """What an NFS-e carries beyond the grid's columns: service, values, taxes, delivery.

    Values in centavos; rates as written (percent text). ``withheld`` holds the delivery rule
    that keeps it out of the lists (None: listed).
    """

    competence: date | None = None
    processed_at: datetime | None = None
    national_code: str | None = None  # cTribNac
    municipal_code: str | None = None  # cTribMun
    nbs: str | None = None
    description: str | None = None  # xDescServ
    incidence_code: str | None = None  # cLocIncid
    incidence_name: str | None = None
    service_cents: int | None = None  # vServ
    net_cents: int | None = None  # vLiq
    iss_rate: str | None = None
    iss_cents: int | None = None  # vISSQN
    retained_cents: int | None = None  # vTotalRet
    iss_retention: str | None = None  # tpRetISSQN
    intermediary_id: str | None = None
    ibscbs_base_cents: int | None = None
    ibscbs_total_cents: int | None = None  # vTotNF
    ibs_cents: int | None = None
    cbs_cents: int | None = None
    replaced_key: str | None = None  # subst/chSubstda
    withheld: Withheld | None = None


@dataclass(frozen=True, slots=True)
class DocumentInput:
    """One document as it arrived, with the metadata the parser extracted.

    ``xml`` is the exact bytes received; ``parse_error`` set means the document is kept in
    quarantine. ``total_cents`` is the total in centavos (vNF, vTPrest, vServ have 2 decimals).
    ``issued_at`` must be aware; its original UTC offset is kept beside the UTC instant.
    ``xml_gzip``, optional, is the gzip ``xml`` was inflated from (a docZip): the store keeps it
    instead of compressing ``xml`` again when its trailer matches ``xml``.
    """

    product: Product
    kind: DocumentKind
    xml: bytes
    access_key: str | None
    nsu: int | None = None
    schema: str | None = None
    model: str | None = None
    serie: int | None = None
    number: int | None = None
    emitter_id: str | None = None
    emitter_name: str | None = None
    recipient_id: str | None = None
    recipient_name: str | None = None
    parties: tuple[Party, ...] = ()
    total_cents: int | None = None
    issued_at: datetime | None = None
    direction: Direction = Direction.RECEIVED
    status: DocumentStatus = DocumentStatus.UNKNOWN
    situation: str | None = None
    parse_error: str | None = None
    xml_gzip: bytes | None = field(default=None, repr=False, compare=False)
    carried_keys: tuple[str, ...] = ()  # CT-e: the NF-e keys it carries (infNFe/chave)
    nfse: NfseDetails | None = None  # NFS-e: its service, values and taxes (table nfse_details)


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """What ``store_document`` did: ids plus flags the engine uses to notify or schedule."""

    document_id: int
    version_id: int
    created: bool  # first time this document was seen
    new_version: bool  # these bytes were not stored before
    became_current: bool  # this version now drives the document's metadata
    nsu_was_new: bool  # the NSU had not been recorded (False also when no NSU)


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """One grid row."""

    id: int
    company_id: int
    product: Product
    kind: DocumentKind
    access_key: str | None
    nsu: int | None
    model: str | None
    serie: int | None
    number: int | None
    emitter_id: str | None
    emitter_name: str | None
    recipient_id: str | None
    recipient_name: str | None
    total_cents: int | None
    issued_at: datetime | None
    issued_offset_minutes: int | None
    direction: Direction
    status: DocumentStatus
    situation: str | None
    quarantined: bool
    parse_error: str | None
    version_count: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class DocumentVersionInfo:
    id: int
    document_id: int
    kind: DocumentKind
    nsu: int | None
    schema: str | None
    sha256: str
    size: int
    is_current: bool
    received_at: datetime


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """Filters of a grid page; ``company_id`` and ``product`` match the grid index."""

    company_id: int
    product: Product
    issued_from: datetime | None = None  # inclusive
    issued_to: datetime | None = None  # exclusive
    direction: Direction | None = None
    kinds: tuple[DocumentKind, ...] = ()
    status: DocumentStatus | None = None
    quarantined: bool | None = None
    newest_first: bool = True


class RowKind(StrEnum):
    """How complete a grid row is: what the office can do with it."""

    SUMMARY = "summary"  # resNFe: the full XML needs a manifestation
    COMPLETE = "complete"  # nfeProc, cteProc, NFS-e: the document itself
    EVENT = "event"  # events of a key whose document never came (an emitter's customers' events)
    UNREADABLE = "unreadable"  # quarantined or of an unknown layout: kept and shown


class GridSort(StrEnum):
    ISSUED_AT = "issued_at"
    VALUE = "total_cents"
    NUMBER = "number"
    COUNTERPART = "counterpart"
    KIND = "kind"
    STATUS = "status"


@dataclass(frozen=True, slots=True)
class GridQuery:
    """One product's grid, every filter applied in SQL.

    ``company_ids`` empty means every company. Key-event rows (events whose document never
    came) take part only while no filter that needs a document's own fields is set.
    ``text`` matches the emitter's or recipient's name (case-insensitive substring).
    """

    product: Product
    company_ids: tuple[int, ...] = ()
    issued_from: datetime | None = None  # inclusive
    issued_to: datetime | None = None  # exclusive
    direction: Direction | None = None
    row_kinds: tuple[RowKind, ...] = ()
    kinds: tuple[DocumentKind, ...] = ()  # stored layouts (resNFe, nfeProc...)
    statuses: tuple[DocumentStatus, ...] = ()
    manifestation: ManifestationState | None = None
    counterpart_id: str | None = None  # CNPJ/CPF of the emitter or the recipient
    emitter_id: str | None = None
    text: str | None = None
    number: int | None = None
    access_key: str | None = None
    min_cents: int | None = None
    max_cents: int | None = None
    quarantined: bool | None = None
    undated: bool = False  # only documents without an issue date (unreadable ones)
    sort: GridSort = GridSort.ISSUED_AT
    descending: bool = True

    @classmethod
    def of(cls, query: DocumentQuery) -> GridQuery:
        """The grid query of a store page query (one company and product, issue-date order)."""
        return cls(
            product=query.product,
            company_ids=(query.company_id,),
            issued_from=query.issued_from,
            issued_to=query.issued_to,
            direction=query.direction,
            kinds=query.kinds,
            statuses=(query.status,) if query.status is not None else (),
            quarantined=query.quarantined,
            descending=query.newest_first,
        )


@dataclass(frozen=True, slots=True)
class KeyEvents:
    """A key known only by its events (no document stored for it): one grid row of its own."""

    row_id: int  # negative: minus the id of its latest event
    company_id: int
    product: Product
    access_key: str
    first_event_at: datetime | None
    last_event_at: datetime | None
    event_count: int
    last_tp_evento: str
    last_description: str | None
    emitted: bool  # the key's issuer is the company itself


@dataclass(frozen=True, slots=True)
class KeyEventFacts:
    """What the grid needs of one key's events: manifestations, cancellation, when they arrived."""

    tp_evento: str
    n_seq_evento: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EventInput:
    """One event (resEvento, procEventoNFe, procEventoCTe, NFS-e evento) as it arrived;
    ``xml_gzip`` as in :class:`DocumentInput`."""

    product: Product
    kind: DocumentKind
    xml: bytes
    access_key: str
    tp_evento: str
    n_seq_evento: int = 1
    nsu: int | None = None
    schema: str | None = None
    description: str | None = None
    protocol: str | None = None
    event_at: datetime | None = None
    cstat: str | None = None
    author_id: str | None = None
    xml_gzip: bytes | None = field(default=None, repr=False, compare=False)
    substitute_key: str | None = None  # NFS-e cancellation by substitution (105102): chSubstituta


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    company_id: int
    product: Product
    kind: DocumentKind
    access_key: str
    tp_evento: str
    n_seq_evento: int
    nsu: int | None
    description: str | None
    protocol: str | None
    event_at: datetime | None
    cstat: str | None
    author_id: str | None
    sha256: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoredEvent:
    event_id: int
    created: bool
    replaced: bool  # a fuller form (procEvento) replaced a summary (resEvento)
    nsu_was_new: bool


# ---------------------------------------------------------------- work queues and audit


@dataclass(frozen=True, slots=True)
class GapRecovery:
    id: int
    company_id: int
    product: Product
    nsu: int | None
    access_key: str | None
    attempts: int
    next_attempt_at: datetime
    status: GapStatus
    last_error: str | None


@dataclass(frozen=True, slots=True)
class GapLedgerLine:
    """The NSU holes of one company and product: found, recovered, still pending, given up."""

    company_id: int
    product: Product
    found: int
    recovered: int
    pending: int
    not_found: int  # the service says the NSU never existed (cStat 137 for it)
    abandoned: int  # attempts exhausted


@dataclass(frozen=True, slots=True)
class Manifestation:
    """A recipient (NF-e) or taker (NFS-e) manifestation request and its result."""

    id: int
    company_id: int
    product: Product
    access_key: str
    tp_evento: str
    n_seq_evento: int
    justification: str | None
    automatic: bool
    status: ManifestationStatus
    not_before: datetime
    attempts: int
    cstat: str | None
    x_motivo: str | None
    protocol: str | None
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One government call, as logged."""

    service: str
    outcome: CallOutcome
    at: datetime
    duration_ms: int
    company_id: int | None = None
    product: Product | None = None
    operation: str | None = None
    cstat: str | None = None
    http_status: int | None = None
    error_text: str | None = None
    run_id: int | None = None
    id: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class PruneResult:
    archives: int
    calls: int
    runs: int


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    job_type: str
    trigger: str
    status: RunStatus
    company_id: int | None
    product: Product | None
    reason: str | None
    started_at: datetime
    finished_at: datetime | None


# ---------------------------------------------------------------- export profiles

EXPORT_KINDS = ("complete", "summary", "event")
CANCELLED_MODES = ("move", "beside")


@dataclass(frozen=True, slots=True)
class ExportProfile:
    """What an automatic export writes, where, and how far it got.

    Empty ``products``, ``kinds``, ``directions`` or ``company_ids`` mean all of them.
    ``cancelled_mode``: "move" puts a cancelled document under ``Canceladas``; "beside" leaves it
    and writes its cancellation event in the same folder.
    """

    name: str
    destination: str
    pattern: str
    products: tuple[Product, ...] = ()
    kinds: tuple[str, ...] = ()
    directions: tuple[Direction, ...] = ()
    company_ids: tuple[int, ...] = ()
    only_authorised: bool = False
    cancelled_mode: str = "move"
    include_pdf: bool = False
    active: bool = True
    id: int = 0
    watermark: int = 0
    exported_count: int = 0
    last_error: str | None = None
    failing_since: datetime | None = None
    next_attempt_at: datetime | None = None
    last_export_at: datetime | None = None
