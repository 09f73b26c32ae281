"""A grid page's order on both engines: no period (dated in the index's order, the undated apart)
and the value sort of a large period (the value index walked, revision 0014)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import event, insert, update

from app.store.db import Database
from app.store.grid import GridRepository
from app.store.models import DocumentRow
from app.store.records import Company, GridQuery, GridSort, Product
from tests.support.grid_rows import summary_row

START = datetime(2026, 3, 1, tzinfo=UTC)
COUNT = 60
UNDATED = {7, 20, 41}  # unreadable documents: no issue date


def _fill(db: Database, company_id: int) -> list[dict[str, Any]]:
    rows = [
        summary_row(
            company_id,
            i,
            None if i in UNDATED else START + timedelta(hours=(i * 37) % COUNT),
            quarantined=i in UNDATED,
            total_cents=(i * 7919) % 1000 if i % 9 else 500,  # ties at 500: broken by id
        )
        for i in range(1, COUNT + 1)
    ]
    with db.session() as s:
        s.execute(insert(DocumentRow), rows)
    return rows


def _pages(grid: GridRepository, query: GridQuery, size: int) -> list[int]:
    ids: list[int] = []
    while True:
        page = grid.page_ids(query, len(ids), size)
        ids += page
        if len(page) < size:
            return ids


def test_no_period_lists_the_dated_by_issue_date_and_the_undated_where_a_missing_date_sorts(
    db: Database, company: Company
) -> None:
    rows = _fill(db, company.id)
    grid = GridRepository(db)
    dated = sorted((r for r in rows if r["issued_at"] is not None), key=lambda r: (r["issued_at"], r["id"]))
    undated = [r["id"] for r in rows if r["issued_at"] is None]
    newest_first = [r["id"] for r in reversed(dated)] + sorted(undated, reverse=True)
    every = GridQuery(Product.NFE)
    for size in (1, 7, 57, 200):  # pages ending before, on and across the boundary
        assert _pages(grid, every, size) == newest_first
        assert _pages(grid, GridQuery(Product.NFE, descending=False), size) == list(reversed(newest_first))
    assert grid.page_ids(every, COUNT - 3, 7) == newest_first[-3:]
    assert grid.page_ids(every, COUNT + 5, 7) == []
    assert _pages(grid, GridQuery(Product.NFE, company_ids=(company.id,)), 9) == newest_first
    assert grid.count(every) == COUNT


def test_a_large_period_sorted_by_value_walks_the_value_index_with_the_same_rows(
    db: Database, company: Company
) -> None:
    rows = _fill(db, company.id)
    start, end = START + timedelta(hours=10), START + timedelta(hours=50)
    inside = [r for r in rows if r["issued_at"] is not None and start <= r["issued_at"] < end]
    by_value = [r["id"] for r in sorted(inside, key=lambda r: (r["total_cents"], r["id"]), reverse=True)]
    query = GridQuery(Product.NFE, issued_from=start, issued_to=end, sort=GridSort.VALUE)
    sent: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
    small, walked = GridRepository(db), GridRepository(db)
    walked.value_walk_min = 10  # this period holds 40: from 10 on, the walk pays
    assert _pages(small, query, 6) == by_value
    assert not any("+documents.issued_at" in statement for statement in sent)
    assert _pages(walked, query, 6) == by_value
    ascending = GridQuery(Product.NFE, issued_from=start, issued_to=end, sort=GridSort.VALUE, descending=False)
    assert _pages(walked, ascending, 6) == list(reversed(by_value))
    walks = [statement for statement in sent if "+documents.issued_at" in statement]
    assert bool(walks) is (db.dialect == "sqlite")  # PostgreSQL's planner chooses from its statistics
    company_only = GridQuery(
        Product.NFE, company_ids=(company.id,), issued_from=start, issued_to=end, sort=GridSort.VALUE
    )
    assert _pages(walked, company_only, 6) == by_value


def test_a_key_without_a_period_is_found_through_its_unique_index(db: Database, company: Company) -> None:
    rows = _fill(db, company.id)
    sent: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
    grid = GridRepository(db)
    key = rows[20]["access_key"]
    assert grid.page_ids(GridQuery(Product.NFE, access_key=key), 0, 50) == [21]
    [statement] = [s for s in sent if "documents.access_key" in s]
    assert "IS NOT NULL" not in statement  # the partial date index would be walked looking for it


def test_the_banner_counts_read_their_partial_indexes(db: Database, company: Company) -> None:
    _fill(db, company.id)
    with db.session() as s:
        s.execute(update(DocumentRow).where(DocumentRow.id.in_([3, 4])).values(status="cancelled"))
    grid = GridRepository(db)
    sent: list[tuple[str, Any]] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append((a[2], a[3])))
    assert grid.count_quarantined(Product.NFE) == len(UNDATED)
    assert grid.count_quarantined(Product.NFE, (company.id,)) == len(UNDATED)
    assert grid.count_quarantined(Product.CTE) == 0
    assert grid.cancelled_after_capture(Product.NFE) == 0  # cancelled, but no event after them
    if db.dialect != "sqlite":
        return  # PostgreSQL chooses from its statistics: bench_grid's plans
    counts = [(statement, parameters) for statement, parameters in sent if statement.startswith("SELECT count")]
    with db.engine.connect() as connection:
        plans = [
            " ".join(str(r[3]) for r in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters))
            for statement, parameters in counts
        ]
    assert all("ix_documents_quarantined" in plan for plan in plans[:3]), plans
    assert "ix_documents_cancelled" in plans[3] and "SCAN documents" not in plans[3], plans[3]


def test_a_few_documents_sorted_by_value_are_not_found_by_walking_the_value_index(
    db: Database, company: Company
) -> None:
    rows = _fill(db, company.id)
    sent: list[tuple[str, Any]] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append((a[2], a[3])))
    grid = GridRepository(db)
    undated = GridQuery(Product.NFE, undated=True, sort=GridSort.VALUE)
    expected = sorted((r for r in rows if r["issued_at"] is None), key=lambda r: (r["total_cents"], r["id"]))
    assert grid.page_ids(undated, 0, 10) == [r["id"] for r in reversed(expected)]
    mine = GridQuery(Product.NFE, company_ids=(company.id,), issued_from=START, issued_to=START + timedelta(hours=5))
    assert len(grid.page_ids(replace(mine, sort=GridSort.VALUE), 0, 10)) == 5
    if db.dialect != "sqlite":
        return
    pages = [(st, p) for st, p in sent if st.startswith("SELECT documents.id") and "LIMIT" in st]
    with db.engine.connect() as connection:
        for statement, parameters in pages:
            plan = " ".join(
                str(r[3]) for r in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            )
            assert "ix_documents_product_value" not in plan, plan
