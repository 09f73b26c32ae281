"""The key-event rows saved in the data folder between openings (issue 24): restored from the same
database only, moved on by what arrived since, rebuilt otherwise."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.core.products import Product
from app.desk import Desk, key_snapshot
from app.desk.grid import GridFilter
from app.desk.key_snapshot import FILE_NAME
from app.store.grid import GridRepository
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT, SUPPLIER


def _event_keys(office: Office) -> set[str]:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
    desk.open()
    try:
        cursor = desk.cursor(GridFilter(Product.NFE))
        return {r.access_key or "" for r in cursor.next_page(100) if r.is_event_row}
    finally:
        desk.close()


def test_the_saved_rows_are_restored_moved_on_and_rebuilt_for_another_database(office: Office) -> None:
    saved = office.harness.office.data_dir / FILE_NAME
    assert _event_keys(office) == {office.event_only}
    body = json.loads(saved.read_text(encoding="utf-8"))
    [row] = body["rows"]
    # A row only the saved file knows: listed, so the opening read the file, not the events.
    planted = [*row[:3], "9" * 44, *row[4:]]
    gone = [row[0] - 1, 999, *row[2:]]  # a company removed since: dropped
    saved.write_text(json.dumps({**body, "rows": [row, planted, gone]}), encoding="utf-8")
    assert _event_keys(office) == {office.event_only, "9" * 44}
    # Another NF-e the company issued, manifested by its customer: read after the saved ids.
    sandbox = office.harness.sandbox
    issued = sandbox.publish_nfe(RECIPIENT, SUPPLIER)
    sandbox.publish_nfe_event(issued, "210210")
    office.harness.clock.advance(timedelta(hours=1, minutes=5))  # the next round of the capture
    office.harness.run_pending()
    assert _event_keys(office) == {office.event_only, "9" * 44, str(issued.key)}
    assert json.loads(saved.read_text(encoding="utf-8"))["seen"] != body["seen"]  # saved again, moved on
    # Saved from another database: not used, built again from the events.
    moved = json.loads(saved.read_text(encoding="utf-8"))
    saved.write_text(json.dumps({**moved, "location": "postgresql://outro/banco"}), encoding="utf-8")
    assert _event_keys(office) == {office.event_only, str(issued.key)}


def test_an_unreadable_file_or_marks_from_other_rows_build_the_index_again(office: Office) -> None:
    saved: Path = office.harness.office.data_dir / FILE_NAME
    saved.write_bytes(b"\x00 not json")
    assert _event_keys(office) == {office.event_only}
    body = json.loads(saved.read_text(encoding="utf-8"))
    planted = [*body["rows"][0][:3], "9" * 44, *body["rows"][0][4:]]
    saved.write_text(json.dumps({**body, "landmarks": ["1|x|", "1|y|"], "rows": [planted]}), encoding="utf-8")
    assert _event_keys(office) == {office.event_only}  # the ids name other rows: a different database


def _made_apart() -> None:
    """Wait for the thread that makes the key-event rows apart (restored or built) to end."""
    for thread in [t for t in threading.enumerate() if t.name == "key-event-index"]:
        thread.join(30)
        assert not thread.is_alive()


def test_a_folder_with_many_events_opens_at_once_and_its_key_event_rows_join_when_made(
    office: Office, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing saved and more events than a first page may wait for, or many rows saved: the rows
    are made on a thread apart; the grid lists the documents meanwhile, and the change mark moves
    when they are made."""
    monkeypatch.setattr(key_snapshot, "BUILD_INLINE_EVENTS", 0)
    monkeypatch.setattr(key_snapshot, "RESTORE_INLINE_BYTES", 0)
    saved = office.harness.office.data_dir / FILE_NAME
    assert not saved.exists()  # a new folder
    held = threading.Event()
    original_events, original_load = GridRepository.key_events, key_snapshot._load

    def slow_key_events(self: GridRepository, *args: Any, **kwargs: Any) -> Any:
        held.wait(30)  # the build stays in flight until the grid has been read
        return original_events(self, *args, **kwargs)

    def slow_load(*args: Any) -> Any:
        held.wait(30)
        return original_load(*args)

    monkeypatch.setattr(GridRepository, "key_events", slow_key_events)
    monkeypatch.setattr(key_snapshot, "_load", slow_load)
    for opening in ("built", "restored"):
        held.clear()
        desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
        desk.open()
        try:
            grid = GridFilter(Product.NFE)
            before = desk.change_mark()
            rows = desk.cursor(grid).next_page(100)
            assert desk._reads().keys.building, opening
            assert {r.access_key for r in rows} == set(office.received)  # the documents, without waiting
            assert not any(r.is_event_row for r in rows)
            held.set()
            _made_apart()
            assert not desk._reads().keys.building
            after = desk.change_mark()
            assert after != before and after.key_index == before.key_index + 1  # open grids read again
            live = desk.live_rows(grid, (before, after, ()))
            assert [r.access_key for r in live.key_rows] == [office.event_only]
            listed = {r.access_key or "" for r in desk.cursor(grid).next_page(100) if r.is_event_row}
            assert listed == {office.event_only}
            assert json.loads(saved.read_text(encoding="utf-8"))["rows"][0][3] == office.event_only
        finally:
            held.set()
            desk.close()
