"""Live grids: what a grid already on screen must change, read by ids, never the whole grid again.

The window keeps, per grid, the store's :class:`ChangeMark` its rows were read at. When the mark
moves (a capture run, a Ciência registered, a resumo become its complete NF-e), ``touched`` names
the documents new or changed in between, and :func:`live_rows` reads those few again: the ones
the grid's filters still list come back fresh (the UI replaces or inserts them at their sorted
place), the others are gone from the grid. F5 is the same read over every loaded id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime

from app.core.clock import BRASILIA
from app.desk.grid import KeyEventIndex, document_rows, key_event_row, key_row_matches, key_rows_wanted, to_query
from app.desk.views import GridFilter, GridRow
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.grid import GridRepository
from app.store.grid_changes import ChangeMark, ChangeRepository, Touched

# (since, until, also): the documents touched between two marks, and the ids ``also`` (F5's loaded rows).
Changed = tuple[ChangeMark, ChangeMark, Iterable[int]]

__all__ = ["ChangeMark", "ChangeRepository", "Changed", "LiveRows", "Outside", "Touched", "live_rows", "outside_period"]


@dataclass(frozen=True, slots=True)
class LiveRows:
    """The documents read again for one grid.

    ``rows``: those of ``checked`` the filters still list, fresh, in no particular order;
    ``key_rows``: every key-event row the filters list now (a small set, kept in memory);
    ``total``: the grid's count now.
    """

    checked: frozenset[int]
    rows: tuple[GridRow, ...]
    key_rows: tuple[GridRow, ...]
    total: int


def live_rows(
    db: Database,
    documents: DocumentRepository,
    grid: GridRepository,
    keys: KeyEventIndex,
    grid_filter: GridFilter,
    changed: Changed,
    now: Callable[[], datetime],
) -> LiveRows:
    """``changed``: (since, until, also): the documents touched between the two marks and the ids
    ``also`` (F5: every loaded row) are read again."""
    since, until, also = changed
    ids = set(also)
    if since != until:
        ids |= ChangeRepository(db).touched(grid_filter.product, since, until).document_ids
    query = to_query(grid_filter)
    checked = frozenset(ids)
    listed = grid.matching_ids(query, checked) if checked else set()
    if checked and (query.issued_from or query.issued_to):  # undated documents join any issue period
        listed |= grid.matching_ids(replace(query, issued_from=None, issued_to=None, undated=True), checked)
    rows = tuple(document_rows(documents, grid, query.product, sorted(listed), now())) if listed else ()
    wanted = key_rows_wanted(query)
    key_rows = tuple(key_event_row(k) for k in keys.current(query.product) if wanted and key_row_matches(k, query))
    total = grid.count(query) + len(key_rows)
    return LiveRows(checked, rows, key_rows, total)


@dataclass(frozen=True, slots=True)
class Outside:
    """Documents the grid's period hides (its other filters kept), and the first day among them."""

    count: int
    since: date | None


def outside_period(grid: GridRepository, grid_filter: GridFilter) -> Outside:
    """What an empty grid offers to show: the same filters over every day."""
    query = to_query(replace(grid_filter, issued_from=None, issued_to=None))
    count = grid.count(query)
    if not count:
        return Outside(0, None)
    first = grid.earliest(query, by_capture=grid_filter.by_capture)
    return Outside(count, first.astimezone(BRASILIA).date() if first is not None else None)
