"""Queries of the grid and of a key's events, and what they answer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from app.core.documents import Direction, DocumentKind, DocumentStatus
from app.core.manifestation import ManifestationState
from app.core.products import Product


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
    # The tax reform's values (issue 23): a document without the groups sorts as NULL.
    IBS = "ibs_cents"
    CBS = "cbs_cents"
    IS = "is_cents"


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
    captured_from: datetime | None = None  # inclusive: when the document was stored
    captured_to: datetime | None = None  # exclusive
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
