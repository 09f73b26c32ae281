"""Grid pages for the desk: filters in SQL, key-event rows merged in, a page's facts in one read each.

A :class:`GridCursor` walks one filtered, sorted grid forwards, a page at a time (what a Qt model's
``fetchMore`` asks for); nothing ever loads the whole table. Key-event rows (keys with events but
no document) come from :class:`KeyEventIndex`, a small set kept current from the events stored
since it last looked, and are merged into the issue-date order by their first event; in any
other order they sort where a missing value does.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from app.core.manifestation import (
    MANIFESTATION_TYPES,
    manifestation_state,
    next_deadline,
)
from app.core.products import Product
from app.desk.days import brasilia_midnight as brasilia_midnight
from app.desk.search import parse_search
from app.desk.views import PAGE as PAGE
from app.desk.views import GridFilter as GridFilter
from app.desk.views import GridRow
from app.store.documents import DocumentRepository
from app.store.grid import CANCELLATION_TYPES, SUMMARY_KINDS, GridRepository
from app.store.records import (
    Direction,
    DocumentKind,
    DocumentStatus,
    DocumentSummary,
    GridQuery,
    GridSort,
    KeyEventFacts,
    KeyEvents,
    PartyRole,
    RowKind,
)
from app.store.reform import GridReform

log = logging.getLogger(__name__)


def to_query(grid: GridFilter) -> GridQuery:
    found = parse_search(grid.search)
    # A key typed or scanned is that document, whatever the period on screen (and the key's own
    # index finds it at once, where the period's index would walk the whole period).
    dated = found.access_key is None
    start = brasilia_midnight(grid.issued_from) if grid.issued_from and dated else None
    end = brasilia_midnight(grid.issued_to + timedelta(days=1)) if grid.issued_to and dated else None
    by_capture = grid.by_capture
    return GridQuery(
        product=grid.product,
        company_ids=grid.company_ids,
        issued_from=None if by_capture else start,
        issued_to=None if by_capture else end,
        captured_from=start if by_capture else None,
        captured_to=end if by_capture else None,
        direction=grid.direction,
        row_kinds=grid.row_kinds,
        kinds=grid.kinds,
        statuses=grid.statuses,
        manifestation=grid.manifestation,
        counterpart_id=found.counterpart_id or grid.counterpart_id,
        emitter_id=grid.emitter_id,
        text=found.text,
        number=found.number,
        access_key=found.access_key,
        min_cents=grid.min_cents,
        max_cents=grid.max_cents,
        sort=grid.sort,
        descending=grid.descending,
    )


def key_rows_wanted(query: GridQuery) -> bool:
    """Key-event rows have no value, number, names, status or manifestation of their own."""
    if query.row_kinds and RowKind.EVENT not in query.row_kinds:
        return False
    needs_document = (
        query.kinds,
        query.emitter_id is not None,
        query.statuses,
        query.manifestation is not None,
        query.counterpart_id is not None,
        bool(query.text),
        query.number is not None,
        query.min_cents is not None,
        query.max_cents is not None,
    )
    return not any(needs_document)


def key_row_matches(row: KeyEvents, query: GridQuery) -> bool:
    if query.company_ids and row.company_id not in query.company_ids:
        return False
    if query.access_key is not None and row.access_key != query.access_key:
        return False
    if query.direction is not None and (query.direction is Direction.EMITTED) != row.emitted:
        return False
    # A key's first event stands for both its issue and its capture (it has no document).
    first = row.first_event_at
    start, end = query.issued_from or query.captured_from, query.issued_to or query.captured_to
    if start is not None and (first is None or first < start):
        return False
    return not (end is not None and (first is None or first >= end))


class KeyEventIndex:
    """Every key of every product that has events and no document, kept current cheaply.

    ``current`` reads the two high-water ids (one statement); when events were stored since the
    last look it asks only for the keys those events touched, and when documents were stored it
    drops the keys that got their document (reading the new documents' keys, or probing the
    index's keys, whichever is fewer). ``restore`` starts it from a saved state
    (``app.desk.key_snapshot``): the first build reads every event.
    """

    def __init__(self, grid: GridRepository) -> None:
        self._grid = grid
        self._lock = threading.Lock()
        self._rows: dict[Product, dict[tuple[int, str], KeyEvents]] = {p: {} for p in Product}
        self._seen: tuple[int, int] | None = None
        self._building = False
        self.generation = 0  # moves when a build apart ends: open grids read their key-event rows again

    def current(self, product: Product) -> list[KeyEvents]:
        if self._building:  # made apart: none yet, and the grid's first rows do not wait for them
            return []
        return self.made_current(product)

    def made_current(self, product: Product) -> list[KeyEvents]:
        """``current`` even while made apart (for the work that makes it)."""
        with self._lock:
            high = self._grid.high_water()
            if high != self._seen:
                self._refresh(high)
            return list(self._rows[product].values())

    @property
    def building(self) -> bool:
        """Made apart and not done yet (``apart``)."""
        return self._building

    def state(self) -> tuple[tuple[int, int] | None, list[KeyEvents]]:
        """The high-water ids seen and every row, as of now (to be saved)."""
        with self._lock:
            return self._seen, [row for rows in self._rows.values() for row in rows.values()]

    def restore(self, seen: tuple[int, int], rows: Sequence[KeyEvents]) -> None:
        """Start from a saved state: the next look reads only what was stored after ``seen``."""
        with self._lock:
            self._rows = {p: {} for p in Product}
            for row in rows:
                self._rows[row.product][(row.company_id, row.access_key)] = row
            self._seen = seen

    def apart(self, work: Callable[[], None], then: Callable[[], None]) -> None:
        """Run ``work`` (the rows restored or built, made current) on a thread of its own, then
        ``then``: meanwhile ``current`` lists none and waits for nothing (every event read: two
        minutes at ten million documents); when the work ends, ``generation`` moves. A failed work
        leaves the rows to the next ``current``."""

        def run() -> None:
            try:
                work()
            except Exception:  # the folder closed meanwhile, the server gone: made on the next look
                log.warning("Índice de chaves com eventos não construído", exc_info=True)
                with self._lock:
                    self._building = False
                return
            with self._lock:
                self._building = False
                self.generation += 1
            then()

        self._building = True
        threading.Thread(target=run, name="key-event-index", daemon=True).start()

    def _refresh(self, high: tuple[int, int]) -> None:
        seen_docs, seen_events = self._seen or (0, 0)
        for product in Product:
            rows = self._rows[product]
            if self._seen is None or high[1] > seen_events:
                for row in self._grid.key_events(product, after_event_id=seen_events if self._seen else 0):
                    rows[(row.company_id, row.access_key)] = row
            if self._seen is not None and high[0] > seen_docs and rows:
                if high[0] - seen_docs < len(rows):  # ids may skip: an upper bound of the new documents
                    arrived = self._grid.document_keys_after(product, seen_docs) & rows.keys()
                else:
                    arrived = self._grid.keys_with_document(product, list(rows))
                for pair in arrived:
                    rows.pop(pair, None)
        self._seen = high


def _before(key_row: GridRow, doc_row: GridRow, descending: bool) -> bool:
    """Does the key-event row come before the document row in issue-date order?"""
    k, d = key_row.issued_at, doc_row.issued_at
    if k is None or d is None:
        # SQL's order: a missing value sorts first ascending, last descending.
        return (k is None) != descending and k is not d
    return k > d if descending else k < d


_MIN = datetime.min.replace(tzinfo=UTC)


def _pending_order(item: GridRow | KeyEvents) -> tuple[bool, datetime, int]:
    """Issue-date order (a key-event row's first event stands for it), a missing date first."""
    when = item.issued_at if isinstance(item, GridRow) else item.first_event_at
    return (when is not None, when or _MIN, item.row_id)


UNDATED_SHOWN = 1_000  # undated documents a period shows beside its own


class GridCursor:
    """One grid, read forwards a page at a time; thread-confined (the UI's worker)."""

    def __init__(
        self,
        query: GridQuery,
        documents: DocumentRepository,
        grid: GridRepository,
        key_rows: Sequence[KeyEvents],
        now: Callable[[], datetime],
    ) -> None:
        self.query = query
        self._documents = documents
        self._grid = grid
        self._now = now
        # Made rows only when handed out: converting every key-event row of a ten-million grid with
        # no period (33,000) cost the first page half a second.
        keyed: list[GridRow | KeyEvents] = (
            [k for k in key_rows if key_row_matches(k, query)] if key_rows_wanted(query) else []
        )
        self._documents_wanted = not (query.row_kinds and set(query.row_kinds) == {RowKind.EVENT})
        if self._documents_wanted and (query.issued_from or query.issued_to):
            # Undated documents (unreadable ones, kept in quarantine) match no period, yet must be
            # seen: they join whatever period is on screen, where a missing date sorts.
            undated = replace(query, issued_from=None, issued_to=None, undated=True)
            keyed += document_rows(documents, grid, query.product, grid.page_ids(undated, 0, UNDATED_SHOWN), now())
        self._keys: deque[GridRow | KeyEvents] = deque()
        self._key_count = 0
        self.replace_keys(keyed)
        self._buffer: deque[GridRow] = deque()
        self._offset = 0
        self._exhausted = not self._documents_wanted
        self._merged = query.sort is GridSort.ISSUED_AT

    def replace_keys(self, rows: Sequence[GridRow | KeyEvents]) -> None:
        """The key-event rows (and undated documents) not handed out yet, in the grid's order."""
        keyed = sorted(rows, key=_pending_order)
        if self.query.descending:
            keyed.reverse()
        self._key_count += len(keyed) - len(self._keys)
        self._keys = deque(keyed)

    def pending_documents(self) -> list[GridRow]:
        """The undated documents waiting beside the key-event rows (not handed out yet)."""
        return [r for r in self._keys if isinstance(r, GridRow) and not r.is_event_row]

    def shift(self, rows: int) -> None:
        """Documents inserted (positive) or removed (negative) before the next page, by a live
        update of the rows already read: the next page starts that much further (or nearer)."""
        self._offset = max(0, self._offset + rows)

    @property
    def at_end(self) -> bool:
        return self._exhausted and not self._buffer and not self._keys

    def count(self) -> int:
        """Rows in the whole grid (one count in SQL plus the key-event rows)."""
        documents = self._grid.count(self.query) if self._documents_wanted else 0
        return documents + self._key_count

    def next_page(self, size: int = PAGE) -> list[GridRow]:
        out: list[GridRow] = []
        descending = self.query.descending
        while len(out) < size:
            if not self._buffer and not self._exhausted:
                self._fill(max(size, PAGE))
            doc = self._buffer[0] if self._buffer else None
            key = self._key_head()
            if doc is None and key is None:
                break
            # Merged by issue date; in any other order they have no value of their own: first
            # ascending, last descending.
            if key is not None and (doc is None or (_before(key, doc, descending) if self._merged else not descending)):
                self._keys.popleft()
                out.append(key)
            else:
                out.append(self._buffer.popleft())
        return out

    def _key_head(self) -> GridRow | None:
        if not self._keys:
            return None
        head = self._keys[0]
        if isinstance(head, KeyEvents):
            head = self._keys[0] = key_event_row(head)
        return head

    def _fill(self, size: int) -> None:
        ids = self._grid.page_ids(self.query, self._offset, size)
        self._offset += len(ids)
        if len(ids) < size:
            self._exhausted = True
        self._buffer.extend(document_rows(self._documents, self._grid, self.query.product, ids, self._now()))


def key_event_row(row: KeyEvents) -> GridRow:
    key = row.access_key
    model = key[20:22] if len(key) == 44 else None
    return GridRow(
        row_id=row.row_id,
        company_id=row.company_id,
        product=row.product,
        row_kind=RowKind.EVENT,
        kind=None,
        access_key=key,
        issued_at=row.first_event_at,
        issued_offset_minutes=None,
        model=model,
        serie=int(key[22:25]) if model else None,
        number=int(key[25:34]) if model else None,
        emitter_id=key[6:20] if model else None,
        emitter_name=None,
        recipient_id=None,
        recipient_name=None,
        total_cents=None,
        direction=Direction.EMITTED if row.emitted else Direction.RECEIVED,
        status=DocumentStatus.UNKNOWN,
        manifestation=None,
        deadline=None,
        cancelled_after_capture=False,
        quarantined=False,
        parse_error=None,
        nsu=None,
        event_count=row.event_count,
        last_event=row.last_description or row.last_tp_evento,
    )


def row_kind_of(doc: DocumentSummary) -> RowKind:
    if doc.quarantined or doc.kind is DocumentKind.UNKNOWN:
        return RowKind.UNREADABLE
    return RowKind.SUMMARY if doc.kind in SUMMARY_KINDS else RowKind.COMPLETE


def document_rows(
    documents: DocumentRepository, grid: GridRepository, product: Product, ids: Sequence[int], now: datetime
) -> list[GridRow]:
    """Grid rows for ``ids`` in that order: summaries, events and requests in one read each."""
    summaries = documents.summaries(ids)
    pairs = [(d.company_id, d.access_key) for d in summaries if d.access_key]
    facts = grid.event_facts(product, pairs) if pairs else {}
    manifested = product is Product.NFE
    requested = grid.requested_keys(product, pairs) if pairs and manifested else set()
    rows = [_row(d, facts.get((d.company_id, d.access_key or ""), []), requested, manifested, now) for d in summaries]
    if product is Product.CTE and rows:
        carried = grid.carried(pairs)
        payers = grid.parties_of_role(PartyRole.TAKER, [r.row_id for r in rows])
        rows = [
            replace(
                r,
                modal=modal_of(r.situation),
                payer_id=payers.get(r.row_id, (None, None))[0],
                payer_name=payers.get(r.row_id, (None, None))[1],
                carried_keys=tuple(carried.get((r.company_id, r.access_key or ""), ())),
            )
            for r in rows
        ]
    elif product is Product.NFSE and rows:
        nets = grid.net_values([r.row_id for r in rows if not r.is_event_row])
        rows = [replace(r, net_cents=nets.get(r.row_id)) for r in rows]
    elif product is Product.NFE and pairs:
        moved_by = grid.carried(pairs, by_nfe=True)
        rows = [replace(r, carried_keys=tuple(moved_by.get((r.company_id, r.access_key or ""), ()))) for r in rows]
    reform = grid.reform_values(ids) if ids else {}
    if reform:  # the few with IBS/CBS: one read by primary key per page
        rows = [_with_reform(r, reform[r.row_id]) if r.row_id in reform else r for r in rows]
    return rows


def _with_reform(row: GridRow, values: GridReform) -> GridRow:
    return replace(
        row, ibs_cents=values.ibs_cents, cbs_cents=values.cbs_cents, is_cents=values.is_cents,
        reform_unreadable=values.unreadable,
    )  # fmt: skip


MODALS = ("Rodoviário", "Aéreo", "Aquaviário", "Ferroviário", "Dutoviário", "Multimodal")


def modal_of(situation: str | None) -> str | None:
    """The CT-e's modal, as its processing writes it at the head of the situation ("CT-e Aéreo")."""
    head = (situation or "").split(" · ", 1)[0]
    return next((modal for modal in MODALS if head.endswith(modal)), None)


def _row(
    doc: DocumentSummary,
    facts: list[KeyEventFacts],
    requested: set[tuple[int, str]],
    manifested: bool,
    now: datetime,
) -> GridRow:
    state = deadline = None
    if manifested and doc.direction is Direction.RECEIVED and doc.access_key and not doc.quarantined:
        registered = [(f.tp_evento, f.n_seq_evento) for f in facts if f.tp_evento in MANIFESTATION_TYPES]
        state = manifestation_state(registered, (doc.company_id, doc.access_key) in requested)
        if doc.issued_at is not None and doc.status not in (DocumentStatus.CANCELLED, DocumentStatus.DENIED):
            deadline = next_deadline(state, doc.issued_at, now)
    cancelled_late = doc.status is DocumentStatus.CANCELLED and any(
        f.tp_evento in CANCELLATION_TYPES and f.created_at > doc.created_at for f in facts
    )
    return GridRow(
        row_id=doc.id,
        company_id=doc.company_id,
        product=doc.product,
        row_kind=row_kind_of(doc),
        kind=doc.kind,
        access_key=doc.access_key,
        issued_at=doc.issued_at,
        issued_offset_minutes=doc.issued_offset_minutes,
        model=doc.model,
        serie=doc.serie,
        number=doc.number,
        emitter_id=doc.emitter_id,
        emitter_name=doc.emitter_name,
        recipient_id=doc.recipient_id,
        recipient_name=doc.recipient_name,
        total_cents=doc.total_cents,
        direction=doc.direction,
        status=doc.status,
        manifestation=state,
        deadline=deadline,
        cancelled_after_capture=cancelled_late,
        quarantined=doc.quarantined,
        parse_error=doc.parse_error,
        nsu=doc.nsu,
        event_count=len(facts),
        version_count=doc.version_count,
        situation=doc.situation,
    )
