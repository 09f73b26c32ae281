"""Keys known only by their events: found at once, after an id, dropped when their document comes,
and the landmarks that tie a saved high-water mark to its database (issue 24)."""

from __future__ import annotations

from pathlib import Path

from app.core.clock import FakeClock
from app.desk.grid import KeyEventIndex
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.events import EventRepository
from app.store.grid import GridRepository
from app.store.records import Company, Product
from tests.store.test_documents import KEY, _res_nfe, _summary_input
from tests.store.test_grid_changes import _cancellation


def test_event_only_keys_after_an_id_and_the_documents_after_another(
    db: Database, company: Company, clock: FakeClock
) -> None:
    grid = GridRepository(db)
    assert grid.high_water() == (0, 0) and grid.landmarks(0, 0) == ("", "")
    event = EventRepository(db).store(company.id, _cancellation())
    [found] = grid.key_events(Product.NFE)
    assert (found.company_id, found.access_key, found.event_count) == (company.id, KEY, 1)
    assert grid.key_events(Product.NFE, after_event_id=event.event_id - 1) == [found]
    assert grid.key_events(Product.NFE, after_event_id=event.event_id) == []
    assert grid.key_events(Product.CTE) == []
    clock.advance(60)
    stored = DocumentRepository(db).store(company.id, _summary_input(_res_nfe()))
    assert grid.key_events(Product.NFE) == []  # the key has its document now
    assert grid.document_keys_after(Product.NFE, stored.document_id - 1) == {(company.id, KEY)}
    assert grid.document_keys_after(Product.NFE, stored.document_id) == set()
    document_mark, event_mark = grid.landmarks(stored.document_id, event.event_id)
    assert document_mark.startswith(f"{company.id}|{KEY}|") and event_mark.startswith(f"{company.id}|{KEY}|")
    assert document_mark != event_mark  # stored a minute apart


def test_the_index_restored_from_a_state_reads_only_what_came_after(
    db: Database, company: Company, clock: FakeClock
) -> None:
    grid = GridRepository(db)
    first = KeyEventIndex(grid)
    event = EventRepository(db).store(company.id, _cancellation())
    [row] = first.current(Product.NFE)
    seen, rows = first.state()
    assert seen == (0, event.event_id) and rows == [row]
    restored = KeyEventIndex(grid)
    restored.restore(seen, rows)
    assert restored.current(Product.NFE) == [row]
    clock.advance(60)
    DocumentRepository(db).store(company.id, _summary_input(_res_nfe()))  # fewer new documents than keys
    assert restored.current(Product.NFE) == [] and first.current(Product.NFE) == []


def test_a_state_restored_with_more_keys_than_new_documents_probes_the_keys(
    db: Database, company: Company, clock: FakeClock, tmp_path: Path
) -> None:
    grid = GridRepository(db)
    EventRepository(db).store(company.id, _cancellation())
    index = KeyEventIndex(grid)
    [row] = index.current(Product.NFE)
    index.restore((0, grid.high_water()[1]), [row])  # as if saved before any document
    stored = DocumentRepository(db).store(company.id, _summary_input(_res_nfe()))
    assert stored.document_id >= 1 and index.current(Product.NFE) == []
