"""The reform's values in the store: written with the lot, read back as the XML says; a document
without the groups has no row (NULL, not zero); notes and their references link both ways."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from app.capture.engine import inputs
from app.core.products import Product
from app.documents.model import NfeMeta
from app.documents.nfe import read_nfe_document
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki
from app.store.db import Database
from app.store.grid import GridRepository
from app.store.records import Company, DocumentInput, GridQuery, GridSort, StoredDocument
from app.store.reform import VALUE_COLUMNS, ReformRepository
from app.store.unit import write_unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nfe"
REFORM = (FIXTURES / "nfe_reforma_tributaria.xml").read_bytes()
OLD = (FIXTURES / "41170706117473000150550010000463202612756525-procNFe.xml").read_bytes()
REFERENCED = "35250137241249000107550014231152171571688010"


def _input(company: Company, data: bytes, nsu: int) -> DocumentInput:
    meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta)
    return inputs.document(
        Product.NFE, company.cnpj, meta, data, nsu, "procNFe_v4.00.xsd", None, shown=meta.recipient, situation=None
    )


def _store(db: Database, company: Company, *docs: DocumentInput) -> list[int]:
    with write_unit(db) as unit:
        stored = unit.store_lot(company.id, list(docs))
    ids = []
    for result in stored:
        assert isinstance(result, StoredDocument)
        ids.append(result.document_id)
    return ids


def test_values_and_items_are_kept_and_read_back(db: Database, company: Company) -> None:
    [doc_id, old_id] = _store(db, company, _input(company, REFORM, 1), _input(company, OLD, 2))
    repo = ReformRepository(db)
    purpose, values = repo.values_of(doc_id)
    assert purpose == "1" and values is not None
    assert (values.ibs_uf_cents, values.ibs_mun_cents, values.ibs_cents, values.cbs_cents) == (3000, 4000, 5000, 8729)
    assert (values.ibs_presumed_cents, values.cbs_presumed_suspended_cents, values.is_cents) == (4310, 120, 100000)
    assert values.total_cents == 500000 and values.unreadable is False
    [item] = values.items
    assert (item.cst, item.class_code, item.cbs_cents, item.is_cents) == ("000", "000001", 10100, 15000)
    assert repo.values_of(old_id) == (None, None)  # no groups: no row, never zeros


def test_a_document_stored_again_keeps_one_set_of_rows(db: Database, company: Company) -> None:
    [first] = _store(db, company, _input(company, REFORM, 1))
    changed = REFORM.replace(b"<vCBS>87.29</vCBS>", b"<vCBS>87,29</vCBS>")  # a new version, unreadable
    [again] = _store(db, company, _input(company, changed, 3))
    assert again == first
    _, values = ReformRepository(db).values_of(first)
    assert values is not None and values.unreadable is True and values.cbs_cents is None
    assert len(values.items) == 1


def test_a_credit_note_links_to_what_it_references_both_ways(db: Database, company: Company) -> None:
    note = REFORM.replace(b"<finNFe>1</finNFe>", b"<finNFe>5</finNFe>")
    [doc_id] = _store(db, company, _input(company, note, 1))
    _store(db, company, _input(company, note, 1))  # the same bytes again: no duplicate link
    repo = ReformRepository(db)
    assert repo.values_of(doc_id)[0] == "5"
    note_key = "15231207933914000154550010006643501427015088"
    assert repo.referenced_by(company.id, note_key) == sorted(
        [REFERENCED, "21323412888283895737729149494949494171688099"]
    )
    assert repo.referencing(company.id, REFERENCED) == [note_key]


def test_grid_values_and_the_report_reads_on_each_engine(db: Database, company: Company) -> None:
    # The reads the grid and the IBS/CBS report make on the driver's own connection (SQLite and
    # PostgreSQL): a page's IBS/CBS/IS by id, the months' bounds, the lines and the counts.
    from datetime import UTC, datetime

    from app.store.reform_lines import ReformLines

    [doc_id, old_id] = _store(db, company, _input(company, REFORM, 1), _input(company, OLD, 2))
    values = ReformRepository(db).grid_values([doc_id, old_id])
    assert list(values) == [doc_id]  # the old NF-e has no groups: absent, not zeros
    assert (values[doc_id].ibs_cents, values[doc_id].cbs_cents, values[doc_id].is_cents) == (5000, 8729, 100000)
    reads = ReformLines(db)
    first, last = reads.bounds((company.id,), (Product.NFE,), None, None)
    assert first is not None and last is not None and first <= last
    start, end = datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
    [line] = list(reads.lines((company.id,), (Product.NFE,), start, end))
    assert (line.document_id, line.product, line.purpose, line.has_groups) == (doc_id, Product.NFE, "1", True)
    assert line.issued_local.tzinfo is None and line.values[VALUE_COLUMNS.index("cbs_cents")] == 8729
    months = [start, datetime(2050, 1, 1, tzinfo=UTC), end]
    assert reads.received_counts((company.id,), (), months) == {(company.id, Product.NFE, 0): 2}
    assert reads.received_counts((), (Product.NFE,), months[1:]) == {}  # none issued after 2050


def test_the_grid_sorts_by_ibs_cbs_and_is_in_the_database(db: Database, company: Company) -> None:
    """IBS, CBS and IS sort in SQL like any grid column: a document without the groups first
    ascending (as SQLite puts a NULL, on PostgreSQL too), then by amount, ties by id."""
    factory = DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=23)
    supplier = Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")
    client = Party(company.cnpj.value, "CLIENTE LTDA", "PR", "4106902", ie="9032000301")
    docs = [
        factory.nfe(
            emitter=supplier, recipient=client, issued_at=datetime(2026, 11, day, tzinfo=UTC), items=day,
            reform=day != 2,
        )
        for day in (1, 2, 3, 4)
    ]  # fmt: skip
    ids = _store(db, company, *(_input(company, nfe.nfe_proc, nsu) for nsu, nfe in enumerate(docs, 1)))
    values = ReformRepository(db).grid_values(ids)
    assert ids[1] not in values and len(values) == 3  # the second carries no groups
    grid = GridRepository(db)
    for sort, field in ((GridSort.IBS, "ibs_cents"), (GridSort.CBS, "cbs_cents"), (GridSort.IS, "is_cents")):
        amounts = {i: getattr(values[i], field) if i in values else None for i in ids}
        expected = sorted(ids, key=lambda i: (-1 if amounts[i] is None else amounts[i], i))
        query = GridQuery(Product.NFE, (company.id,), sort=sort, descending=False)
        assert grid.page_ids(query, 0, 10) == expected
        assert grid.page_ids(replace(query, descending=True), 0, 10) == expected[::-1]
    assert amounts[expected[0]] is None  # the one without the groups (or IS) first


def test_the_reports_count_reads_its_partial_index(sqlite_db: Database) -> None:
    """Revision 0015: the count per company, product and month reads a range of
    ix_documents_received_issued (a million documents: tens of MB, not the 1.2 GB table), with or
    without a choice of companies and products. SQLite uses a partial index only when the query
    repeats its WHERE literally: a bound 'received' would scan the table."""
    from sqlalchemy import event

    from app.store.reform_lines import ReformLines

    statements: list[tuple[str, object]] = []

    def keep(_conn: object, _cursor: object, statement: str, parameters: object, *_: object) -> None:
        statements.append((statement, parameters))

    months = [datetime(2026, 1, 1, 3, tzinfo=UTC), datetime(2026, 2, 1, 3, tzinfo=UTC)]
    event.listen(sqlite_db.engine, "before_cursor_execute", keep)
    try:
        for companies, products in (((), ()), ((1, 2), (Product.NFE, Product.CTE))):
            assert ReformLines(sqlite_db).received_counts(companies, products, months) == {}
    finally:
        event.remove(sqlite_db.engine, "before_cursor_execute", keep)
    counts = [(sql, params) for sql, params in statements if "count(*)" in sql]
    assert len(counts) == 2
    with sqlite_db.engine.connect() as connection:
        for sql, params in counts:
            plan = " | ".join(str(row[-1]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params))
            # "COVERING" in newer SQLite; 3.40 says "INDEX", yet reads no column of the table (its
            # WHERE terms are the index's: the row's seek is deferred and never made)
            assert "INDEX ix_documents_received_issued (issued_at>? AND issued_at<?)" in plan, plan
