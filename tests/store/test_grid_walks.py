"""The grid's walks for ten million documents, on a real database of each engine: the capture period
newest issued first (on both engines a bounded walk of the issue-date index, PostgreSQL's undated
few first, the period sorted when it does not hold the page), the value sort largest first on the
partial covering indexes of revision 0016, every company's and one company's. Each gives the rows
the period sorted gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, update

from app.core.keys import AccessKey
from app.store import grid_order
from app.store.companies import CompanyRepository
from app.store.db import Database
from app.store.grid import GridRepository
from app.store.models import DocumentRow
from app.store.records import Company, GridQuery, GridSort, Product
from tests.store.conftest import CNPJ_B
from tests.store.test_grid_order import _pages

START = datetime(2026, 3, 1, tzinfo=UTC)
COUNT = 90
KEY_PARTS: dict[str, Any] = {
    "uf": "SP", "year_month": "2603", "issuer": "11222333000181", "model": "55", "serie": 1, "tp_emis": 1,
}  # fmt: skip


def _fill(db: Database, companies: tuple[int, int]) -> list[dict[str, Any]]:
    """Issued an hour apart; most captured within the hour, every seventh days later (an old NF-e
    captured lately), every eleventh unreadable (no issue date); values with ties and a few missing."""
    rows = []
    for i in range(1, COUNT + 1):
        issued = START + timedelta(hours=i)
        created = issued + (timedelta(days=3, hours=i % 5) if i % 7 == 0 else timedelta(minutes=10 + i % 40))
        rows.append(
            {
                "id": i,
                "company_id": companies[i % 3 == 0],
                "product": "nfe",
                "kind": "resNFe",
                "access_key": AccessKey.build(**KEY_PARTS, number=i, code=i).value,
                "issued_at": None if i % 11 == 0 else issued,
                "direction": "received",
                "status": "summary",
                "quarantined": i % 11 == 0,
                "version_count": 1,
                "created_at": created,
                "updated_at": created,
                "total_cents": None if i % 13 == 0 else (i * 7919) % 500 if i % 4 else 250,
            }
        )
    with db.session() as s:
        s.execute(insert(DocumentRow), rows)
    return rows


def _sorted(db: Database, rows: list[dict[str, Any]], column: str, descending: bool) -> list[int]:
    """The engine's order, ties by id: a missing value is SQLite's smallest, PostgreSQL's largest."""
    small = db.dialect == "sqlite"
    ordered = sorted(
        rows, key=lambda r: ((r[column] is not None) == small, r[column] or 0, r["id"]), reverse=descending
    )
    return [r["id"] for r in ordered]


def _sent(db: Database) -> list[tuple[str, Any]]:
    sent: list[tuple[str, Any]] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append((a[2], a[3])))
    return sent


def _plans(db: Database, statements: list[tuple[str, Any]]) -> list[str]:
    with db.engine.connect() as connection:
        return [
            " ".join(str(r[3]) for r in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters))
            for statement, parameters in statements
        ]


@pytest.mark.parametrize("spare", [grid_order.CAPTURE_WALK_SPARE, 0])
def test_a_capture_period_newest_first_lists_the_period_sorted(
    db: Database, company: Company, monkeypatch: pytest.MonkeyPatch, spare: int
) -> None:
    monkeypatch.setattr(grid_order, "CAPTURE_WALK_SPARE", spare)  # 0: windows too small, the sort takes over
    other = CompanyRepository(db).add(CNPJ_B, "Beta Indústria S.A.", certificate_ref="cert-beta")
    rows = _fill(db, (company.id, other.id))
    grid = GridRepository(db)
    sent = _sent(db)
    for start, end in ((START + timedelta(hours=30), START + timedelta(days=9)), (START, START + timedelta(hours=40))):
        inside = [r for r in rows if start <= r["created_at"] < end]
        query = GridQuery(Product.NFE, captured_from=start, captured_to=end)
        for size in (1, 7, 200):  # pages ending before, on and across the undated ones
            assert _pages(grid, query, size) == _sorted(db, inside, "issued_at", descending=True)
        ascending = GridQuery(Product.NFE, captured_from=start, captured_to=end, descending=False)
        assert _pages(grid, ascending, 7) == _sorted(db, inside, "issued_at", descending=False)
        mine = GridQuery(Product.NFE, company_ids=(other.id,), captured_from=start, captured_to=end)
        theirs = [r for r in inside if r["company_id"] == other.id]
        assert _pages(grid, mine, 4) == _sorted(db, theirs, "issued_at", descending=True)
    walks = [statement for statement, _ in sent if "walked" in statement]
    assert walks  # on both engines: PostgreSQL's statistics had it sort the period too (0.84 s at ten million)
    if db.dialect == "sqlite":
        walked = [(statement, parameters) for statement, parameters in sent if "walked" in statement]
        assert all("ix_documents_product_grid" in p or "ix_documents_grid" in p for p in _plans(db, walked[:3]))


def test_the_largest_first_walk_their_partial_indexes_and_list_the_missing_values_last(
    db: Database, company: Company
) -> None:
    other = CompanyRepository(db).add(CNPJ_B, "Beta Indústria S.A.", certificate_ref="cert-beta")
    rows = _fill(db, (company.id, other.id))
    walked = GridRepository(db)
    walked.value_walk_min = 10  # from 10 documents in the period, the walk pays
    sent = _sent(db)
    start, end = START + timedelta(hours=5), START + timedelta(hours=80)
    for companies in ((), (company.id,)):
        dated = [r for r in rows if r["issued_at"] is not None and start <= r["issued_at"] < end]
        inside = [r for r in dated if not companies or r["company_id"] in companies]
        query = GridQuery(Product.NFE, company_ids=companies, issued_from=start, issued_to=end, sort=GridSort.VALUE)
        for size in (1, 6, 200):  # the last pages reach the documents without a value: the period sorted
            assert _pages(walked, query, size) == _sorted(db, inside, "total_cents", descending=True)
        smallest = GridQuery(
            Product.NFE, company_ids=companies, issued_from=start, issued_to=end, sort=GridSort.VALUE, descending=False
        )
        assert _pages(walked, smallest, 6) == _sorted(db, inside, "total_cents", descending=False)
    valued = [(st, p) for st, p in sent if "total_cents IS NOT NULL" in st]
    assert bool(valued) is (db.dialect == "sqlite")
    if db.dialect == "sqlite":
        plans = _plans(db, valued)
        assert any("COVERING INDEX ix_documents_product_valued" in p for p in plans), plans
        assert any("COVERING INDEX ix_documents_company_valued" in p for p in plans), plans


def test_the_name_search_reads_the_names_on_an_index_alone(db: Database, company: Company) -> None:
    other = CompanyRepository(db).add(CNPJ_B, "Beta Indústria S.A.", certificate_ref="cert-beta")
    rows = _fill(db, (company.id, other.id))
    named = {
        5: ("CEREALISTA BARBOSA LTDA", None),
        12: (None, "Cerealista Barbosa S.A."),
        30: ("CEREALISTA BARBOSA", None),
    }
    with db.session() as s:
        for document_id, (emitter, recipient) in named.items():
            s.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id)
                .values(emitter_name=emitter, recipient_name=recipient)
            )
    grid = GridRepository(db)
    sent = _sent(db)
    start, end = START, START + timedelta(days=5)
    inside = [r for r in rows if r["id"] in named and r["issued_at"] is not None and start <= r["issued_at"] < end]
    query = GridQuery(Product.NFE, issued_from=start, issued_to=end, text="cerealista barbosa")
    assert _pages(grid, query, 2) == _sorted(db, inside, "issued_at", descending=True)
    mine = GridQuery(Product.NFE, company_ids=(company.id,), issued_from=start, issued_to=end, text="barbosa")
    assert _pages(grid, mine, 2) == _sorted(db, [r for r in inside if r["company_id"] == company.id], "issued_at", True)
    plain = GridQuery(Product.NFE, company_ids=(company.id,), issued_from=start, issued_to=end)
    assert len(grid.page_ids(plain, 0, 10)) == 10
    if db.dialect != "sqlite":
        return  # PostgreSQL searches names by its trigram indexes (revision 0014)
    pages = [(st, p) for st, p in sent if st.startswith("SELECT documents.id") and "LIMIT" in st]
    plans = _plans(db, pages)
    assert any("COVERING INDEX ix_documents_product_grid_names" in p for p in plans), plans
    assert any("COVERING INDEX ix_documents_grid_names" in p for p in plans), plans
    assert "_names" not in plans[-1] and "COVERING INDEX ix_documents_grid " in plans[-1], plans[-1]
