"""The document grids: one page of ids with every filter in SQL, counts, and the facts a page shows.

A grid is one product, one or every company, filtered and sorted in SQL: the UI never loads a
table to filter it. Pages are ids (``page_ids``); their rows come from
``DocumentRepository.summaries`` in one read, and the manifestation and cancellation facts of a
page's keys from ``event_facts`` and ``requested_keys`` in one read each.

Keys known only by their events (an emitter receives its customers' manifestations; MDF-e and
CT-e passage events of its NF-e) have no document row. ``key_events`` finds them, all at once or
only among the events stored after a given id, so the facade can keep that small set current
without scanning the events table for every page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    exists,
    func,
    literal,
    literal_column,
    not_,
    or_,
    select,
)

from app.core.event_types import CANCELLATIONS
from app.core.manifestation import CIENCIA, CONCLUSIVE_TYPES, MANIFESTATION_TYPES, state_of_type
from app.store.db import Database
from app.store.grid_order import (
    VALUE_WALK_MIN,
    capture_page,
    capture_walk_applies,
    ordered,
    period_unindexed,
    split_undated,
    value_walk_pays,
    without_period,
)
from app.store.items import IN_CHUNK
from app.store.models import CompanyRow, DocumentRow, EventRow, ManifestationRow
from app.store.names import NameDictionary, name_clause
from app.store.prepared import placeholders
from app.store.records import (
    DocumentKind,
    GridQuery,
    GridSort,
    KeyEventFacts,
    KeyEvents,
    ManifestationState,
    ManifestationStatus,
    PartyRole,
    Product,
    RowKind,
)
from app.store.reform import GridReform, ReformRepository
from app.store.types import utc_from_text

SUMMARY_KINDS = (DocumentKind.RES_NFE, DocumentKind.DPS)
COMPLETE_KINDS = (DocumentKind.NFE_PROC, DocumentKind.CTE_PROC, DocumentKind.NFSE)
MANIFESTATION_EVENT_TYPES = tuple(sorted(MANIFESTATION_TYPES))
_IN_FLIGHT = (ManifestationStatus.PENDING.value, ManifestationStatus.SENT.value)


def _same_key_events(*tp_eventos: str) -> ColumnElement[bool]:
    return exists().where(
        EventRow.company_id == DocumentRow.company_id,
        EventRow.product == DocumentRow.product,
        EventRow.access_key == DocumentRow.access_key,
        EventRow.tp_evento.in_(tp_eventos),
    )


def _manifestation_clause(state: ManifestationState) -> ColumnElement[bool]:
    """The grid's manifestation filter as SQL, the same reading as ``manifestation_state``."""
    any_event = _same_key_events(*MANIFESTATION_EVENT_TYPES)
    if state in (ManifestationState.NONE, ManifestationState.REQUESTED):
        in_flight = exists().where(
            ManifestationRow.company_id == DocumentRow.company_id,
            ManifestationRow.product == DocumentRow.product,
            ManifestationRow.access_key == DocumentRow.access_key,
            ManifestationRow.status.in_(_IN_FLIGHT),
        )
        return and_(not_(any_event), in_flight if state is ManifestationState.REQUESTED else not_(in_flight))
    conclusive = sorted(CONCLUSIVE_TYPES)
    if state is ManifestationState.CIENCIA:
        return and_(_same_key_events(CIENCIA), not_(_same_key_events(*conclusive)))
    latest = (
        select(EventRow.tp_evento)
        .where(
            EventRow.company_id == DocumentRow.company_id,
            EventRow.product == DocumentRow.product,
            EventRow.access_key == DocumentRow.access_key,
            EventRow.tp_evento.in_(conclusive),
        )
        .order_by(EventRow.n_seq_evento.desc(), EventRow.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    tp = next(t for t in conclusive if state_of_type(t) is state)
    return latest == tp


def _row_kind_clause(kinds: Sequence[RowKind]) -> ColumnElement[bool] | None:
    parts: list[ColumnElement[bool]] = []
    readable = DocumentRow.quarantined.is_(False)
    if RowKind.SUMMARY in kinds:
        parts.append(and_(readable, DocumentRow.kind.in_([k.value for k in SUMMARY_KINDS])))
    if RowKind.COMPLETE in kinds:
        parts.append(and_(readable, DocumentRow.kind.in_([k.value for k in COMPLETE_KINDS])))
    if RowKind.UNREADABLE in kinds:
        parts.append(or_(DocumentRow.quarantined.is_(True), DocumentRow.kind == DocumentKind.UNKNOWN.value))
    if not parts:
        return None  # only key-event rows asked for: no document matches
    return or_(*parts)


def grid_where(
    query: GridQuery, *, like_ignores_case: bool = False, names: Sequence[str] | None = None
) -> list[ColumnElement[bool]]:
    """The documents matching ``query`` (key-event rows are the facade's).

    ``names``: those the dictionary found holding the query's text (app.store.names, PostgreSQL).
    ``like_ignores_case``: the database's LIKE already ignores case (SQLite, for ASCII), so the
    name search needs no ``lower()`` on both sides of every row (ILIKE elsewhere); it is SQLite's,
    whose planner is also told that undated documents are few (``unlikely``): without statistics it
    scanned a company's value index (revision 0016) for them rather than seek them by issue date.
    """
    clauses: list[ColumnElement[bool]] = [DocumentRow.product == query.product.value]
    if query.product is Product.NFSE:
        # The NFS-e delivery rules (rule book §6.1, §6.4): before the cutoff date, or the company's
        # own while that capture is off, stored but not listed. NF-e and CT-e rows never are, so
        # their grids keep reading the index alone.
        clauses.append(DocumentRow.withheld.is_(None))
    if query.company_ids:
        clauses.append(DocumentRow.company_id.in_(query.company_ids))
    elif query.access_key is not None or query.undated:
        # Every company: still one look-up per company in the (company, product, key) index.
        clauses.append(DocumentRow.company_id.in_(select(CompanyRow.id).scalar_subquery()))
    if query.access_key is not None:
        clauses.append(DocumentRow.access_key == query.access_key)
    if query.undated:
        undated = DocumentRow.issued_at.is_(None)
        clauses.append(func.unlikely(undated) if like_ignores_case else undated)
    if query.issued_from is not None:
        clauses.append(DocumentRow.issued_at >= query.issued_from)
    if query.issued_to is not None:
        clauses.append(DocumentRow.issued_at < query.issued_to)
    if query.captured_from is not None or query.captured_to is not None:
        # Spelled out: created_at is NOT NULL, and then SQLite does not infer this term from the
        # range, which the capture index's WHERE needs to be used (revision 0008).
        clauses.append(DocumentRow.created_at.is_not(None))
    if query.captured_from is not None:
        clauses.append(DocumentRow.created_at >= query.captured_from)
    if query.captured_to is not None:
        clauses.append(DocumentRow.created_at < query.captured_to)
    if query.direction is not None:
        clauses.append(DocumentRow.direction == query.direction.value)
    if query.row_kinds:
        kind_clause = _row_kind_clause(query.row_kinds)
        clauses.append(kind_clause if kind_clause is not None else literal(False))
    if query.kinds:
        clauses.append(DocumentRow.kind.in_([k.value for k in query.kinds]))
    if query.emitter_id is not None:
        clauses.append(DocumentRow.emitter_id == query.emitter_id)
    if query.statuses:
        clauses.append(DocumentRow.status.in_([s.value for s in query.statuses]))
    if query.manifestation is not None:
        clauses.append(_manifestation_clause(query.manifestation))
    if query.counterpart_id is not None:
        clauses.append(
            or_(DocumentRow.emitter_id == query.counterpart_id, DocumentRow.recipient_id == query.counterpart_id)
        )
    if query.text:
        clauses.append(name_clause(query.text, like_ignores_case=like_ignores_case, names=names))
    if query.number is not None:
        clauses.append(DocumentRow.number == query.number)
    if query.quarantined is not None:
        clauses.append(DocumentRow.quarantined.is_(query.quarantined))
    if query.min_cents is not None:
        clauses.append(DocumentRow.total_cents >= query.min_cents)
    if query.max_cents is not None:
        clauses.append(DocumentRow.total_cents <= query.max_cents)
    return clauses


# Reads per key, on the driver, one statement per company: ``company_id = ? AND product = ? AND
# access_key IN (...)`` is a seek per key in the unique (company, product, key...) index of the
# table read. ``(company, key) IN (...)`` had SQLite scan that whole index, a VALUES table joined
# to it had it build an automatic index per statement, and SQLAlchemy compiled the 1,000
# parameters of either anew for every page.
_KEY_EVENT_FACTS = (
    "SELECT company_id, access_key, tp_evento, n_seq_evento, created_at FROM events "
    "WHERE company_id = ? AND product = ? AND access_key IN ({keys})"
)
_KEY_EVENT_GROUPS = (
    "SELECT company_id, access_key, min(event_at), max(event_at), count(*), max(id) FROM events "
    "WHERE company_id = ? AND product = ? AND access_key IN ({keys}) GROUP BY company_id, access_key"
)
_KEYS_WITH_DOCUMENT = (
    "SELECT company_id, access_key FROM documents WHERE company_id = ? AND product = ? AND access_key IN ({keys})"
)
_REQUESTED_KEYS = (
    "SELECT DISTINCT company_id, access_key FROM manifestations "
    "WHERE company_id = ? AND product = ? AND access_key IN ({keys}) AND status IN ('pending', 'sent')"
)
# Every key: the events' (company, product, key) index read in its order (DISTINCT for free).
_ORPHAN_KEYS = (
    "SELECT DISTINCT e.company_id, e.access_key FROM events e WHERE e.product = ? "
    "AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.company_id = e.company_id "
    "AND d.product = e.product AND d.access_key = e.access_key)"
)
# The keys of the events stored after an id: a range of the primary key. With DISTINCT, SQLite
# preferred the ordered walk of that whole index (60 ms at a million documents, 0.6 s at ten, on
# every refresh); duplicates are dropped by the caller.
_ORPHAN_KEYS_AFTER = (
    "SELECT e.company_id, e.access_key FROM events e WHERE e.id > ? AND e.product = ? "
    "AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.company_id = e.company_id "
    "AND d.product = e.product AND d.access_key = e.access_key)"
)
_DOCUMENT_KEYS_AFTER = (
    "SELECT company_id, access_key FROM documents WHERE id > ? AND product = ? AND access_key IS NOT NULL"
)
_DOCUMENT_LANDMARK = "SELECT company_id, access_key, created_at FROM documents WHERE id = ?"
_EVENT_LANDMARK = "SELECT company_id, access_key, created_at FROM events WHERE id = ?"
_EVENTS_BY_ID = "SELECT id, tp_evento, description FROM events WHERE id IN ({ids})"
_CARRIED = "SELECT company_id, {key}, {other} FROM cte_carried_nfe WHERE company_id = ? AND {key} IN ({{keys}})"
_CARRIED_BY_CTE = _CARRIED.format(key="cte_key", other="nfe_key")
_CARRIED_BY_NFE = _CARRIED.format(key="nfe_key", other="cte_key")
_PARTY_OF_ROLE = "SELECT document_id, tax_id, name FROM document_parties WHERE role = ? AND document_id IN ({ids})"
_NET_VALUES = "SELECT document_id, net_cents FROM nfse_details WHERE net_cents IS NOT NULL AND document_id IN ({ids})"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def per_key(driver: Any, sql: str, product: Product | None, pairs: Iterable[tuple[int, str]]) -> list[Any]:
    """``sql`` for the (company id, key) ``pairs``: one statement per company and 500 keys
    (``product`` None: a table of one product, whose SQL binds no product)."""
    by_company: dict[int, list[str]] = {}
    for company_id, key in sorted(set(pairs)):
        by_company.setdefault(company_id, []).append(key)
    rows: list[Any] = []
    for company_id, keys in by_company.items():
        for chunk in _chunks(keys):
            statement = sql.format(keys=placeholders(len(chunk)))
            head = (company_id,) if product is None else (company_id, product.value)
            rows += driver.execute(statement, (*head, *chunk)).fetchall()
    return rows


def _landmark(row: Any) -> str:
    if row is None:
        return ""
    company_id, key, created = row
    created_at = utc_from_text(created)
    return f"{company_id}|{key}|{created_at.isoformat() if created_at else ''}"


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), IN_CHUNK):
        yield values[start : start + IN_CHUNK]


class GridRepository:
    """Pages of document ids and what a page shows beside them; reads only."""

    value_walk_min = VALUE_WALK_MIN  # documents in a period from which a value sort walks its index

    def __init__(self, db: Database) -> None:
        self._db = db
        self._sqlite = self._like_ignores_case = db.engine.dialect.name == "sqlite"
        self._names = NameDictionary(db)

    def _where(self, query: GridQuery) -> list[ColumnElement[bool]]:
        names = self._names.matching(query.text) if query.text else None
        return grid_where(query, like_ignores_case=self._like_ignores_case, names=names)

    def page_ids(self, query: GridQuery, offset: int, limit: int) -> list[int]:
        """One page of ids in the query's order (ties by id, the same direction); documents
        without an issue date sort as SQLite sorts a missing value: first ascending, last descending."""
        if offset < 0 or limit <= 0:
            raise ValueError("offset must be >= 0 and limit > 0")
        with self._db.reader() as s:
            if capture_walk_applies(query):  # app.store.grid_order
                walked = capture_page(s, query, self._where, offset, limit, undated_first=not self._sqlite)
                if walked is not None:
                    return walked
            if not split_undated(query):
                return self._page(s, query, offset, limit)
            # No period: the dated ones in the (product, issue date) index's order, then or before
            # them the undated few, instead of the whole product sorted for one page (revision 0014).
            dated = [*self._where(query), DocumentRow.issued_at.is_not(None)]
            undated = self._where(replace(query, undated=True))
            first, second = (dated, undated) if query.descending else (undated, dated)
            ids = list(s.scalars(ordered(query, first).offset(offset).limit(limit)))
            if len(ids) == limit:
                return ids
            if ids:
                first_total = offset + len(ids)
            else:
                first_total = s.scalar(select(func.count()).select_from(DocumentRow).where(*first)) or 0
            rest = ordered(query, second).offset(max(0, offset - first_total)).limit(limit - len(ids))
            return ids + list(s.scalars(rest))

    def _page(self, s: Any, query: GridQuery, offset: int, limit: int) -> list[int]:
        where = self._where(query)
        if query.sort is GridSort.VALUE and self._sqlite:
            unindexed = ordered(query, where, unindexed=True).offset(offset).limit(limit)
            if not value_walk_pays(s, query, where, self.value_walk_min):  # the value index: never walked
                return list(s.scalars(unindexed))
            # SQLite: a large period sorted by value walks the value index (app.store.grid_order).
            where = self._where(without_period(query)) + period_unindexed(query)
            if query.descending:  # the valued, on their partial indexes alone (revision 0016)
                valued = ordered(query, [*where, DocumentRow.total_cents.is_not(None)]).offset(offset).limit(limit)
                ids = list(s.scalars(valued))
                if len(ids) == limit:
                    return ids
            if query.company_ids:
                return list(s.scalars(unindexed))
        return list(s.scalars(ordered(query, where).offset(offset).limit(limit)))

    def matching_ids(self, query: GridQuery, ids: Iterable[int]) -> set[int]:
        """Which of ``ids`` the query lists (a live grid's changed documents), by primary key."""
        found: set[int] = set()
        wanted = sorted(set(ids))
        with self._db.reader() as s:
            for chunk in _chunks(wanted):
                statement = select(DocumentRow.id).where(*self._where(query), DocumentRow.id.in_(chunk))
                found.update(s.scalars(statement))
        return found

    def earliest(self, query: GridQuery, *, by_capture: bool) -> datetime | None:
        """The first capture (or issue) instant among the query's documents."""
        column = DocumentRow.created_at if by_capture else DocumentRow.issued_at
        with self._db.reader() as s:
            return s.scalar(select(func.min(column)).where(*self._where(query)))

    def count(self, query: GridQuery) -> int:
        with self._db.reader() as s:
            return s.scalar(select(func.count()).select_from(DocumentRow).where(*self._where(query))) or 0

    def high_water(self) -> tuple[int, int]:
        """(largest document id, largest event id): what ``key_events`` has seen, in one read."""
        with self._db.reader() as s:
            row = s.execute(select(select(func.max(DocumentRow.id)).scalar_subquery(), func.max(EventRow.id))).one()
        return int(row[0] or 0), int(row[1] or 0)

    def key_events(self, product: Product, *, after_event_id: int = 0) -> list[KeyEvents]:
        """Keys of ``product`` that have events and no document; with ``after_event_id``, only the
        keys that got an event after it (the facade's incremental refresh).

        Two steps: the keys without a document, from the events' (company, product, key) index
        alone, then the events of those few keys only (a million documents' events hold a few
        thousand such keys).
        """
        with self._db.driver_connection() as driver:
            if after_event_id:
                found = driver.execute(_ORPHAN_KEYS_AFTER, (after_event_id, product.value)).fetchall()
                orphans = sorted({(int(cid), str(key)) for cid, key in found})
            else:
                orphans = driver.execute(_ORPHAN_KEYS, (product.value,)).fetchall()
            groups = per_key(driver, _KEY_EVENT_GROUPS, product, orphans) if orphans else []
            latest: dict[int, tuple[str, str | None]] = {}
            for chunk in _chunks([int(g[5]) for g in groups]):
                sql = _EVENTS_BY_ID.format(ids=placeholders(len(chunk)))
                latest.update((event_id, (tp, text)) for event_id, tp, text in driver.execute(sql, tuple(chunk)))
            cnpjs = dict(driver.execute("SELECT id, cnpj FROM companies").fetchall()) if groups else {}
        result = []
        for company_id, key, first_at, last_at, count, last_id in groups:
            tp, description = latest[int(last_id)]
            result.append(
                KeyEvents(
                    row_id=-int(last_id),
                    company_id=company_id,
                    product=product,
                    access_key=key,
                    first_event_at=utc_from_text(first_at),
                    last_event_at=utc_from_text(last_at),
                    event_count=int(count),
                    last_tp_evento=tp,
                    last_description=description,
                    # NF-e and CT-e keys carry the issuer's CNPJ at positions 7-20.
                    emitted=len(key) == 44 and key[6:20] == cnpjs.get(company_id),
                )
            )
        return result

    def document_keys_after(self, product: Product, document_id: int) -> set[tuple[int, str]]:
        """The (company id, key) of the documents stored after ``document_id``: a primary-key range."""
        with self._db.driver_connection() as driver:
            rows = driver.execute(_DOCUMENT_KEYS_AFTER, (document_id, product.value)).fetchall()
        return {(int(cid), str(key)) for cid, key in rows}

    def landmarks(self, document_id: int, event_id: int) -> tuple[str, str]:
        """What the document and the event of these ids are (company, key, arrival), as text: a
        saved high-water mark still names the same rows only in the database it was taken from."""
        with self._db.driver_connection() as driver:
            document = driver.execute(_DOCUMENT_LANDMARK, (document_id,)).fetchone()
            event = driver.execute(_EVENT_LANDMARK, (event_id,)).fetchone()
        return _landmark(document), _landmark(event)

    def keys_with_document(self, product: Product, pairs: Iterable[tuple[int, str]]) -> set[tuple[int, str]]:
        """Which (company id, key) pairs now have a document (a key-event row that got its NF-e)."""
        with self._db.driver_connection() as driver:
            return {(cid, key) for cid, key in per_key(driver, _KEYS_WITH_DOCUMENT, product, pairs)}

    def event_facts(
        self, product: Product, pairs: Iterable[tuple[int, str]]
    ) -> dict[tuple[int, str], list[KeyEventFacts]]:
        """Every event type, sequence and arrival of the given keys: one seek per key in the events'
        unique index, however many events are stored."""
        wanted = sorted(set(pairs))
        found: dict[tuple[int, str], list[KeyEventFacts]] = {pair: [] for pair in wanted}
        with self._db.driver_connection() as driver:
            for cid, key, tp, seq, created in per_key(driver, _KEY_EVENT_FACTS, product, wanted):
                found[(cid, key)].append(KeyEventFacts(tp, seq, utc_from_text(created) or _EPOCH))
        return found

    def requested_keys(self, product: Product, pairs: Iterable[tuple[int, str]]) -> set[tuple[int, str]]:
        """The keys with a manifestation queued or sent and not yet answered."""
        with self._db.driver_connection() as driver:
            return {(cid, key) for cid, key in per_key(driver, _REQUESTED_KEYS, product, pairs)}

    def carried(self, pairs: Iterable[tuple[int, str]], *, by_nfe: bool = False) -> dict[tuple[int, str], list[str]]:
        """The NF-e keys each (company, CT-e key) carries, or with ``by_nfe`` the CT-e keys that
        carried each (company, NF-e key); one seek per key in ``cte_carried_nfe``."""
        wanted = sorted(set(pairs))
        found: dict[tuple[int, str], list[str]] = {pair: [] for pair in wanted}
        with self._db.driver_connection() as driver:
            for cid, key, other in per_key(driver, _CARRIED_BY_NFE if by_nfe else _CARRIED_BY_CTE, None, wanted):
                found[(cid, key)].append(other)
        return found

    def parties_of_role(self, role: PartyRole, document_ids: Sequence[int]) -> dict[int, tuple[str | None, str | None]]:
        """(tax id, name) of the party holding ``role`` in each document (the CT-e's payer)."""
        found: dict[int, tuple[str | None, str | None]] = {}
        with self._db.driver_connection() as driver:
            for chunk in _chunks(list(document_ids)):
                sql = _PARTY_OF_ROLE.format(ids=placeholders(len(chunk)))
                for document_id, tax_id, name in driver.execute(sql, (role.value, *chunk)):
                    found.setdefault(document_id, (tax_id, name))
        return found

    def net_values(self, document_ids: Sequence[int]) -> dict[int, int]:
        """NFS-e: the net value (vLiq, centavos) of each document that states one: what the taker
        pays when ISS or federal taxes are withheld, beside the service value (vServ)."""
        found: dict[int, int] = {}
        with self._db.driver_connection() as driver:
            for chunk in _chunks(list(document_ids)):
                for document_id, cents in driver.execute(
                    _NET_VALUES.format(ids=placeholders(len(chunk))), tuple(chunk)
                ):
                    found[document_id] = cents
        return found

    def reform_values(self, document_ids: Sequence[int]) -> dict[int, GridReform]:
        """IBS, CBS and IS of the page's documents that carry the tax reform's groups."""
        return ReformRepository(self._db).grid_values(document_ids)

    def count_quarantined(self, product: Product, company_ids: Sequence[int] = ()) -> int:
        """The banner's unreadable documents: the few rows of a partial index (revision 0014), whose
        WHERE the query repeats word for word (SQLite uses it only then)."""
        clauses = [DocumentRow.product == product.value, DocumentRow.quarantined == literal_column("true")]
        if company_ids:
            clauses.append(DocumentRow.company_id.in_(company_ids))
        with self._db.reader() as s:
            return s.scalar(select(func.count()).select_from(DocumentRow).where(*clauses)) or 0

    def cancelled_after_capture(
        self, product: Product, company_ids: Sequence[int] = (), since: datetime | None = None
    ) -> int:
        """Documents cancelled by an event that arrived after the document itself was stored
        (the office may already have booked them): the cancelled ones from their partial index
        (revision 0014; its WHERE repeated as a literal), each one's events by key."""
        clauses = [
            DocumentRow.product == product.value,
            DocumentRow.status == literal_column("'cancelled'"),
            exists().where(
                EventRow.company_id == DocumentRow.company_id,
                EventRow.product == DocumentRow.product,
                EventRow.access_key == DocumentRow.access_key,
                EventRow.tp_evento.in_(CANCELLATION_TYPES),
                EventRow.created_at > DocumentRow.created_at,
            ),
        ]
        if company_ids:
            clauses.append(DocumentRow.company_id.in_(company_ids))
        if since is not None:
            clauses.append(DocumentRow.updated_at >= since)
        with self._db.reader() as s:
            return s.scalar(select(func.count()).select_from(DocumentRow).where(*clauses)) or 0


# Cancellation (110111) and cancellation by substitution (110112) of NF-e and CT-e.
CANCELLATION_TYPES = CANCELLATIONS
