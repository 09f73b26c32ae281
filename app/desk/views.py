"""What the desk answers: frozen values, raw enums beside the data (labels are ``app.desk.labels``')."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

from app.core.cadence import Action
from app.core.manifestation import ManifestationState, PendingDeadline
from app.core.products import Product
from app.store.records import (
    Direction,
    DocumentKind,
    DocumentStatus,
    DocumentVersionInfo,
    EventRecord,
    GridSort,
    Manifestation,
    Party,
    RowKind,
)

PAGE = 200  # rows a grid fetches at a time
# The notices of the office server's connection (app.desk.nodes.hear_office): gone, and back.
OFFICE_LOST = "office-offline"
OFFICE_BACK = "office-online"

if TYPE_CHECKING:  # the values only: the window's first paint loads no XML reader
    from app.documents.reform_model import ReformValues


@dataclass(frozen=True, slots=True)
class GridFilter:
    """What the window's filter bar (or ``documents list``) asks for; days are Brasília's, inclusive."""

    product: Product
    company_ids: tuple[int, ...] = ()  # empty: every company
    issued_from: date | None = None
    issued_to: date | None = None
    by_capture: bool = False  # the period is the days the documents were captured, not issued
    direction: Direction | None = None
    row_kinds: tuple[RowKind, ...] = ()
    kinds: tuple[DocumentKind, ...] = ()
    statuses: tuple[DocumentStatus, ...] = ()
    manifestation: ManifestationState | None = None
    counterpart_id: str | None = None
    emitter_id: str | None = None
    min_cents: int | None = None
    max_cents: int | None = None
    search: str = ""
    sort: GridSort = GridSort.ISSUED_AT
    descending: bool = True


@dataclass(frozen=True, slots=True)
class ProductBadge:
    """One product of one company as the company list shows it."""

    product: Product
    action: Action  # QUERY (due now), WAIT, BLOCKED, PAUSED, DISABLED
    capturing: bool  # a query is in flight right now
    until: datetime | None
    reason: str
    last_cstat: str | None
    last_message: str | None
    documents_today: int
    pending_recoveries: int
    next_query_at: datetime | None
    stalled: bool


@dataclass(frozen=True, slots=True)
class CompanyLine:
    company_id: int
    cnpj: str
    name: str
    active: bool
    certificate_not_after: datetime | None
    certificate_problem: str | None
    badges: tuple[ProductBadge, ...]

    def certificate_days_left(self, now: datetime) -> int | None:
        if self.certificate_not_after is None:
            return None
        return (self.certificate_not_after - now).days


@dataclass(frozen=True, slots=True)
class GridRow:
    """One row of a grid: a document, or a key known only by its events (``row_kind`` EVENT)."""

    row_id: int  # a document's id; negative for a key-event row
    company_id: int
    product: Product
    row_kind: RowKind
    kind: DocumentKind | None  # the stored layout; None for a key-event row
    access_key: str | None
    issued_at: datetime | None
    issued_offset_minutes: int | None
    model: str | None
    serie: int | None
    number: int | None
    emitter_id: str | None
    emitter_name: str | None
    recipient_id: str | None
    recipient_name: str | None
    total_cents: int | None
    direction: Direction
    status: DocumentStatus
    manifestation: ManifestationState | None  # received NF-e only
    deadline: PendingDeadline | None
    cancelled_after_capture: bool
    quarantined: bool
    parse_error: str | None
    nsu: int | None
    event_count: int = 0
    last_event: str | None = None  # a key-event row: its latest event's description
    version_count: int = 0
    situation: str | None = None  # as the document states it (cSitNFe, xMotivo...)
    modal: str | None = None  # CT-e: Rodoviário, Aéreo...
    payer_id: str | None = None  # CT-e: the taker (tomador), who pays for the service
    payer_name: str | None = None
    carried_keys: tuple[str, ...] = ()  # CT-e: the NF-e it carries; NF-e: the CT-e that moved it
    net_cents: int | None = None  # NFS-e: vLiq, what the taker pays (total_cents is vServ)
    # The tax reform's IBS (state + municipal), CBS and IS, centavos; None: no groups (issue 23).
    ibs_cents: int | None = None
    cbs_cents: int | None = None
    is_cents: int | None = None
    reform_unreadable: bool = False  # the groups are there but a value could not be read

    @property
    def counterpart_id(self) -> str | None:
        return self.recipient_id if self.direction is Direction.EMITTED else self.emitter_id

    @property
    def counterpart_name(self) -> str | None:
        return self.recipient_name if self.direction is Direction.EMITTED else self.emitter_name

    @property
    def is_event_row(self) -> bool:
        return self.row_id < 0


@dataclass(frozen=True, slots=True)
class ManifestationLine:
    request: Manifestation
    label: str
    deadline: datetime | None
    attempts: str  # NT 2018.002 "X de N tentativas" while it matters, else ""
    refused_before_sending: bool  # never reached the service (certificate, keyring, layout)


@dataclass(frozen=True, slots=True)
class RelatedDocument:
    """A document linked to the one shown (a CT-e and the NF-e it carries); ``row`` None when
    this company never received it."""

    product: Product
    access_key: str
    row: GridRow | None


@dataclass(frozen=True, slots=True)
class DocumentDetail:
    row: GridRow
    company_name: str
    company_cnpj: str
    parties: tuple[Party, ...]
    versions: tuple[DocumentVersionInfo, ...]
    events: tuple[EventRecord, ...]
    manifestations: tuple[ManifestationLine, ...]
    allowed_manifestations: tuple[str, ...]  # tpEvento the office may send now by a plain request
    related: tuple[RelatedDocument, ...] = ()  # the CT-e that moved an NF-e, the NF-e a CT-e carries
    rectifiable_manifestations: tuple[str, ...] = ()  # conclusive tpEvento offered as the one rectification
    reform: ReformValues | None = None  # IBS/CBS/IS (app.store.reform); None: the document has no groups
    purpose: str | None = None  # NF-e finNFe ("5" nota de crédito, "6" nota de débito)
    references: tuple[RelatedDocument, ...] = ()  # NF-e: the ones it references and the notes referencing it


@dataclass(frozen=True, slots=True)
class ManifestationActions:
    """What a document's manifestation buttons offer now: ``allowed`` by a plain request, and
    ``rectifiable`` only as the one deliberate rectification of a registered conclusive event."""

    allowed: tuple[str, ...] = ()
    rectifiable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ManifestationOutcome:
    """What became of a request made from the desk."""

    access_key: str
    tp_evento: str
    accepted: bool
    pending: bool
    refused: bool  # refused before reaching the service: nothing was sent, nothing recorded
    message: str
    protocol: str | None = None
    cstat: str | None = None
    request: Manifestation | None = None  # as stored (None: refused, nothing stored)
    attempts: str = ""  # NT 2018.002 "X de N tentativas" after a rejection
    queued_elsewhere: bool = False  # another instance captures here: it sends the request
    rectifiable: bool = False  # refused as already registered: the one rectification is still possible


@dataclass(frozen=True, slots=True)
class Alerts:
    """What a person must not miss, for the banner (one product, the selected companies)."""

    cancelled_after_capture: int
    deadlines_within_5_days: int
    quarantined: int

    @property
    def any(self) -> bool:
        return bool(self.cancelled_after_capture or self.deadlines_within_5_days or self.quarantined)
