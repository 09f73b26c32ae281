"""What a live grid reads: the store's change mark, the documents touched, the capture-date period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.events import EventRepository
from app.store.grid import GridRepository
from app.store.grid_changes import ChangeMark, ChangeRepository
from app.store.records import Company, DocumentKind, EventInput, GridQuery, Product
from tests.store.test_documents import KEY, _full_input, _proc, _res_nfe, _summary_input


def _cancellation() -> EventInput:
    return EventInput(
        product=Product.NFE,
        kind=DocumentKind.PROC_EVENTO_NFE,
        xml=b"<procEventoNFe><tpEvento>110111</tpEvento></procEventoNFe>",
        access_key=KEY,
        tp_evento="110111",
        n_seq_evento=1,
        nsu=30,
        schema="procEventoNFe_v1.00.xsd",
        description="Cancelamento",
    )


def test_the_mark_moves_with_each_change_and_names_the_documents_touched(
    db: Database, company: Company, fixtures_dir: Path, clock: FakeClock
) -> None:
    changes, docs = ChangeRepository(db), DocumentRepository(db)
    empty = changes.mark()
    assert empty == ChangeMark() and changes.mark() == empty  # nothing stored, nothing read again
    stored = docs.store(company.id, _summary_input(_res_nfe()))
    after_summary = changes.mark()
    assert after_summary != empty
    touched = changes.touched(Product.NFE, empty, after_summary)
    assert touched.document_ids == {stored.document_id}
    assert changes.touched(Product.CTE, empty, after_summary).document_ids == frozenset()
    # The complete NF-e arrives: a new version of the same document.
    clock.advance(60)
    docs.store(company.id, _full_input(_proc(fixtures_dir)))
    after_full = changes.mark()
    assert after_full.version_id > after_summary.version_id
    assert changes.touched(Product.NFE, after_summary, after_full).document_ids == {stored.document_id}
    # A cancellation: an event of its key, which names the document and the key.
    EventRepository(db).store(company.id, _cancellation())
    after_event = changes.mark()
    touched = changes.touched(Product.NFE, after_full, after_event)
    assert touched.document_ids == {stored.document_id}
    assert touched.event_keys == {(company.id, KEY)}
    assert changes.touched(Product.NFE, after_event, after_event).document_ids == frozenset()


def test_the_capture_period_lists_by_the_day_stored_whatever_the_issue_date(
    db: Database, company: Company, clock: FakeClock
) -> None:
    grid = GridRepository(db)
    clock.set(datetime(2026, 11, 2, 12, tzinfo=UTC))
    stored = DocumentRepository(db).store(company.id, _summary_input(_res_nfe()))  # issued in 2021
    today = datetime(2026, 11, 2, 3, tzinfo=UTC)  # Brasília's midnight
    captured_today = GridQuery(Product.NFE, captured_from=today, captured_to=today + timedelta(days=1))
    issued_today = GridQuery(Product.NFE, issued_from=today, issued_to=today + timedelta(days=1))
    assert grid.page_ids(captured_today, 0, 10) == [stored.document_id]
    assert grid.count(captured_today) == 1
    assert grid.page_ids(issued_today, 0, 10) == [] and grid.count(issued_today) == 0
    assert grid.matching_ids(captured_today, [stored.document_id, 999]) == {stored.document_id}
    assert grid.matching_ids(issued_today, [stored.document_id]) == set()
    earliest = grid.earliest(GridQuery(Product.NFE), by_capture=False)
    assert earliest is not None and earliest.year == 2021
    assert grid.earliest(GridQuery(Product.NFE), by_capture=True) == datetime(2026, 11, 2, 12, tzinfo=UTC)
