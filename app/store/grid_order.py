"""The order a grid's page is read in, and the shapes that keep it on an index (issue 24).

Sorting by issue date with no period reads the dated documents in the (product, issue date)
index's order and the undated few apart, where one statement sorted the whole product for a page.
Sorting by value over a large period of every company walks the value index (revision 0014) and
checks each row's period; SQLite's planner, without statistics, preferred the period's index and
sorted all of its rows (1.1 s at ten million documents), so on SQLite the grid writes the period
as ``+column`` terms, which no index can serve, once a short walk of the period's index has shown
at least ``VALUE_WALK_MIN`` documents in it (fewer: the period's rows sorted is cheaper, and a
walk of the value index for a handful of matches would read all of it). PostgreSQL chooses from
its statistics. Largest first, the walk says "total_cents IS NOT NULL" and reads the partial
covering index of every company or of the one company asked for (revision 0016: the period checked
in the index, no row read); the documents without a value come after every valued one, so when
that walk does not fill the page the rows are read as before. One company: below
``VALUE_WALK_MIN`` documents, or smallest first, its period sorted.

The window's default view, newest issued first among what was captured in the last 30 days, had
SQLite read the period from the capture index and sort all of it for a page (1.58 million rows at
ten million documents: 1.75 s); PostgreSQL did the same from its statistics (0.84 s). What arrived
lately is mostly what was issued lately, so on both engines the page is read by walking the
issue-date index from the newest, a bounded number of entries (``capture_walk``), keeping those
captured in the period; when that window does not hold the whole page (an old capture period, the
grid's end) the period's rows are sorted as before. PostgreSQL sorts a missing issue date first
when the newest come first: there the period's undated few are read first, by their own seeks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import ColumnElement, case, func, literal_column, select

from app.store.models import DocumentRow
from app.store.records import Direction, GridQuery, GridSort
from app.store.reform import grid_sort_column

_COUNTERPART = case(
    (DocumentRow.direction == Direction.EMITTED.value, DocumentRow.recipient_name), else_=DocumentRow.emitter_name
)
SORT_COLUMNS: dict[GridSort, Any] = {
    GridSort.ISSUED_AT: DocumentRow.issued_at,
    GridSort.VALUE: DocumentRow.total_cents,
    GridSort.NUMBER: DocumentRow.number,
    GridSort.COUNTERPART: _COUNTERPART,
    GridSort.KIND: DocumentRow.kind,
    GridSort.STATUS: DocumentRow.status,
    **{sort: grid_sort_column(sort) for sort in (GridSort.IBS, GridSort.CBS, GridSort.IS)},  # issue 23
}


_VALUE_UNINDEXED = literal_column("+documents.total_cents", DocumentRow.total_cents.type)
VALUE_WALK_MIN = 50_000  # documents in a period from which walking the value index pays (SQLite)


def ordered(query: GridQuery, where: Sequence[ColumnElement[bool]], *, unindexed: bool = False) -> Any:
    """``unindexed`` (SQLite, by value): ``+total_cents``, an order no index gives, so that SQLite
    does not walk the value index through every document for a few (a company's, the undated ones:
    51 s at a million, where they are read by their own index and sorted in milliseconds)."""
    column = _VALUE_UNINDEXED if unindexed and query.sort is GridSort.VALUE else SORT_COLUMNS[query.sort]
    order = (column.desc(), DocumentRow.id.desc()) if query.descending else (column.asc(), DocumentRow.id.asc())
    return select(DocumentRow.id).where(*where).order_by(*order)


def split_undated(query: GridQuery) -> bool:
    """Issue-date order, no period, no key: a key keeps its unique index (said "issued_at IS NOT
    NULL", SQLite walked the whole product in date order looking for it: 4.5 s at a million)."""
    periods = (query.issued_from, query.issued_to, query.captured_from, query.captured_to)
    dated_order = query.sort is GridSort.ISSUED_AT and all(p is None for p in periods)
    return dated_order and not query.undated and query.access_key is None


CAPTURE_WALK_SPARE = 1_000  # issue-date entries walked beyond twice the rows asked for


def capture_walk_applies(query: GridQuery) -> bool:
    """Newest issued first over a capture period, with no filter that most documents fail (the
    walk reads the issue order until its window is full: a rare name would have it read it all)."""
    rare = (
        query.text, query.number is not None, query.manifestation is not None, query.counterpart_id,
        query.emitter_id, query.kinds, query.statuses, query.min_cents is not None, query.max_cents is not None,
        query.quarantined is not None, query.access_key is not None, query.undated,
    )  # fmt: skip
    captured = query.captured_from is not None or query.captured_to is not None
    issued = query.issued_from is not None or query.issued_to is not None
    newest_first = query.sort is GridSort.ISSUED_AT and query.descending
    return newest_first and captured and not issued and not any(rare)


def capture_walk(query: GridQuery, where: Sequence[ColumnElement[bool]], offset: int, limit: int) -> Any:
    """The page of a capture period from the newest ``2 * (offset + limit) + CAPTURE_WALK_SPARE``
    dated documents matching ``where`` (the query's terms without its period) in issue-date order:
    right when it holds ``limit`` ids (the walk kept every one before them), else the caller reads
    the page as before. Dated only: a missing date sorts last, newest first (SQLite's order)."""
    window = 2 * (offset + limit) + CAPTURE_WALK_SPARE
    walked = (
        select(DocumentRow.id, DocumentRow.issued_at, DocumentRow.created_at)
        .where(*where, DocumentRow.issued_at.is_not(None))
        .order_by(DocumentRow.issued_at.desc(), DocumentRow.id.desc())
        .limit(window)
        .subquery("walked")
    )
    period: list[ColumnElement[bool]] = []
    if query.captured_from is not None:
        period.append(walked.c.created_at >= query.captured_from)
    if query.captured_to is not None:
        period.append(walked.c.created_at < query.captured_to)
    order = (walked.c.issued_at.desc(), walked.c.id.desc())
    return select(walked.c.id).where(*period).order_by(*order).offset(offset).limit(limit)


def capture_page(
    s: Any,
    query: GridQuery,
    where: Callable[[GridQuery], list[ColumnElement[bool]]],
    offset: int,
    limit: int,
    *,
    undated_first: bool,
) -> list[int] | None:
    """The page of a capture period read by ``capture_walk``, or None when its window does not hold
    it. ``undated_first`` (PostgreSQL, whose missing date sorts first newest first): the period's
    undated few, read by their own seeks (company, product, no issue date), come before the walk."""
    ids: list[int] = []
    if undated_first:
        undated = where(replace(query, undated=True))
        ids = list(s.scalars(ordered(query, undated).offset(offset).limit(limit)))
        if len(ids) == limit:
            return ids
        before = offset + len(ids) if ids else s.scalar(select(func.count()).select_from(DocumentRow).where(*undated))
        offset, limit = max(0, offset - (before or 0)), limit - len(ids)
    walked = list(s.scalars(capture_walk(query, where(without_period(query)), offset, limit)))
    return ids + walked if len(walked) == limit else None


def without_period(query: GridQuery) -> GridQuery:
    return replace(query, issued_from=None, issued_to=None, captured_from=None, captured_to=None)


def value_walk_pays(s: Any, query: GridQuery, where: Sequence[ColumnElement[bool]], minimum: int) -> bool:
    """Every company or one, a period, and at least ``minimum`` documents in it (a walk of at most
    that many entries of the period's index says so)."""
    periods = (query.issued_from, query.issued_to, query.captured_from, query.captured_to)
    several = len(query.company_ids) > 1  # one company walks its own value index (revision 0016)
    if several or query.access_key is not None or all(p is None for p in periods):
        return False
    probe = select(DocumentRow.id).where(*where).offset(minimum - 1).limit(1)
    return s.scalar(probe) is not None


def period_unindexed(query: GridQuery) -> list[ColumnElement[bool]]:
    """The period's terms in a form SQLite cannot drive an index with (``+column``)."""
    issued = literal_column("+documents.issued_at", DocumentRow.issued_at.type)
    captured = literal_column("+documents.created_at", DocumentRow.created_at.type)
    bounds = ((issued, query.issued_from, query.issued_to), (captured, query.captured_from, query.captured_to))
    clauses: list[ColumnElement[bool]] = []
    for column, start, end in bounds:
        if start is not None:
            clauses.append(column >= start)
        if end is not None:
            clauses.append(column < end)
    return clauses
