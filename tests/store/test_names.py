"""The grid's name search on both engines: the same documents found, SQLite by LIKE on the rows,
PostgreSQL through the dictionary of the names its triggers keep (revision 0018)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import event, insert, text, update

from app.core.clock import FakeClock
from app.store import names
from app.store.db import Database, alembic_config, head_revision, open_database
from app.store.documents import DocumentRepository
from app.store.grid import GridRepository
from app.store.models import DocumentRow
from app.store.models.documents import POSTGRESQL_ONLY_INDEXES
from app.store.names import NameDictionary
from app.store.records import Company, DocumentInput, DocumentKind, GridQuery, Product
from tests.support.grid_rows import access_key, summary_row

START = datetime(2026, 3, 1, tzinfo=UTC)
SUPPLIERS = ("CEREALISTA BARBOSA LTDA", "Cerealista Barbosa S.A.", "CEREALISTA_BARBOSA 50%", "Moinho Ferreira")


def _insert(db: Database, company_id: int, count: int) -> None:
    """``count`` documents in ONE statement (the dictionary's trigger is per statement), their
    emitters in turn from SUPPLIERS, the company as recipient, one hour apart."""
    rows = [
        summary_row(
            company_id,
            i,
            START + timedelta(hours=i),
            emitter_name=SUPPLIERS[i % len(SUPPLIERS)],
            recipient_name="Alfa Comércio Ltda",
        )
        for i in range(1, count + 1)
    ]
    with db.session() as s:
        s.execute(insert(DocumentRow), rows)


def _pages(grid: GridRepository, query: GridQuery, size: int = 3) -> list[int]:
    ids: list[int] = []
    while page := grid.page_ids(query, len(ids), size):
        ids += page
    return ids


def _dictionary(db: Database) -> set[str]:
    with db.reader() as s:
        return set(s.scalars(text("SELECT name FROM document_names")))


def _statements(db: Database) -> list[str]:
    sent: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
    return sent


def test_a_name_is_found_in_either_column_in_any_case_with_wildcards_taken_literally(
    db: Database, company: Company
) -> None:
    _insert(db, company.id, 12)
    grid = GridRepository(db)
    sent = _statements(db)
    barbosa = [i for i in range(12, 0, -1) if i % 4 in (0, 1)]  # the two spellings, newest first
    assert _pages(grid, GridQuery(Product.NFE, text="cerealista barbosa")) == barbosa
    assert _pages(grid, GridQuery(Product.NFE, text="LISTA_BARBOSA 50%")) == [10, 6, 2]
    assert _pages(grid, GridQuery(Product.NFE, text="alfa comércio"[:4])) == list(range(12, 0, -1))  # recipient
    assert grid.count(GridQuery(Product.NFE, text="ferreira")) == 3
    assert grid.count(GridQuery(Product.NFE, text="nobody by this name")) == 0
    oldest_first = GridQuery(Product.NFE, company_ids=(company.id,), text="moinho", descending=False)
    assert _pages(grid, oldest_first) == [3, 7, 11]
    documents = [s for s in sent if "FROM documents" in s]
    assert len(documents) >= 6
    if db.dialect == "postgresql":  # the documents by the names the dictionary found, never ILIKE
        assert not any("LIKE" in s.upper() for s in documents)
        assert sum("= ANY" in s for s in documents) == len(documents) - 1  # no name holds "nobody…"
    else:
        assert all(" LIKE " in s for s in documents)


def test_the_triggers_keep_every_written_name_and_a_renamed_one(db: Database, company: Company) -> None:
    _insert(db, company.id, 4)
    if db.dialect != "postgresql":
        assert NameDictionary(db).matching("barbosa") is None  # SQLite keeps none: LIKE on the rows
        return
    assert _dictionary(db) == {*SUPPLIERS, "Alfa Comércio Ltda"}
    stored = DocumentRepository(db).store(  # the capture's own path
        company.id,
        DocumentInput(
            Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", access_key(50), nsu=1, emitter_name="Laticinios Serra"
        ),
    )
    assert "Laticinios Serra" in _dictionary(db)
    with db.session() as s:
        s.execute(update(DocumentRow).where(DocumentRow.id == 1).values(emitter_name="Transportes Lima ME"))
    assert "Transportes Lima ME" in _dictionary(db)
    grid = GridRepository(db)
    assert _pages(grid, GridQuery(Product.NFE, text="lima me")) == [1]
    assert _pages(grid, GridQuery(Product.NFE, text="serra")) == [stored.document_id]
    assert set(NameDictionary(db).matching("barbosa") or []) == set(SUPPLIERS[:3])


def test_too_many_names_matched_are_searched_on_the_rows_with_the_same_result(
    db: Database, company: Company, monkeypatch: pytest.MonkeyPatch
) -> None:
    _insert(db, company.id, 12)
    grid = GridRepository(db)
    query = GridQuery(Product.NFE, text="a")  # in every name
    by_names = _pages(grid, query)
    monkeypatch.setattr(names, "MATCHED_NAMES_MAX", 2)
    sent = _statements(db)
    assert _pages(grid, query) == by_names == list(range(12, 0, -1))
    documents = [s for s in sent if "FROM documents" in s]
    assert any("LIKE" in s.upper() for s in documents)


def test_0018_fills_the_dictionary_from_the_stored_names_and_goes_down_and_up_again(
    db_target: Path | str, db: Database, company: Company, clock: FakeClock
) -> None:
    with db.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0017")
    _insert(db, company.id, 8)  # written before the dictionary existed
    if db.dialect == "postgresql":
        with db.reader() as s:
            assert s.scalar(text("SELECT to_regclass('document_names')")) is None
    db.close()
    with open_database(db_target, clock=clock) as again:
        assert again.revision() == head_revision()
        grid = GridRepository(again)
        assert _pages(grid, GridQuery(Product.NFE, text="ferreira")) == [7, 3]
        if again.dialect == "postgresql":
            assert _dictionary(again) == {*SUPPLIERS, "Alfa Comércio Ltda"}
            with again.reader() as s:
                indexes = set(s.scalars(text("SELECT indexname FROM pg_indexes WHERE tablename = 'documents'")))
            assert POSTGRESQL_ONLY_INDEXES <= indexes
            assert not any(name.endswith("_trgm") for name in indexes)  # revision 0014's, replaced
