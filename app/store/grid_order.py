"""The order a grid's page is read in, and the shapes that keep it on an index (issue 24).

Sorting by issue date with no period reads the dated documents in the (product, issue date)
index's order and the undated few apart, where one statement sorted the whole product for a page.
Sorting by value over a large period of every company walks the value index (revision 0014) and
checks each row's period; SQLite's planner, without statistics, preferred the period's index and
sorted all of its rows (1.1 s at ten million documents), so on SQLite the grid writes the period
as ``+column`` terms, which no index can serve, once a short walk of the period's index has shown
at least ``VALUE_WALK_MIN`` documents in it (fewer: the period's rows sorted is cheaper, and a
walk of the value index for a handful of matches would read all of it). PostgreSQL chooses from
its statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import ColumnElement, case, literal_column, select

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


def without_period(query: GridQuery) -> GridQuery:
    return replace(query, issued_from=None, issued_to=None, captured_from=None, captured_to=None)


def value_walk_pays(s: Any, query: GridQuery, where: Sequence[ColumnElement[bool]], minimum: int) -> bool:
    """Every company, a period, and at least ``minimum`` documents in it (a walk of at most that
    many entries of the period's index says so)."""
    periods = (query.issued_from, query.issued_to, query.captured_from, query.captured_to)
    if query.company_ids or query.access_key is not None or all(p is None for p in periods):
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
