"""The window left alone: arrivals, changed rows and the turning day reach the grid without a key.

A real window over a data folder the sandbox filled through real capture (HTTPS, mutual TLS); the
harness captures beside it, as the service of another process would, and only the FakeClock moves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtPdf import QPdfDocument
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.core.manifestation import ManifestationState
from app.core.products import Product
from app.desk import Desk
from app.desk.views import GridRow
from app.store.records import RowKind
from app.ui.grid_model import row_identity
from app.ui.main_window import MainWindow
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfe_harness

LIVE_MS = 5_000  # the goal: a change in the store is on screen within 5 s


def _window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> MainWindow:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitUntil(lambda: window.models[Product.NFE].total is not None, timeout=20_000)
    return window


def _keys(window: MainWindow) -> list[str | None]:
    return [r.access_key for r in window.models[Product.NFE].rows]


def _row(window: MainWindow, key: str) -> GridRow:
    return next(r for r in window.models[Product.NFE].rows if r.access_key == key)


def _selected_keys(window: MainWindow) -> list[str | None]:
    return [r.access_key for r in window.selected_rows(Product.NFE)]


def _publish(harness: Harness, count: int) -> list[str]:
    keys = [str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(count)]
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.run_pending()
    return keys


def test_arrivals_and_changed_rows_show_without_a_key_and_the_clerk_keeps_his_place(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    _publish(harness, 60)  # enough rows to scroll
    window = _window(qtbot, desk, tmp_path)
    model, view, pane = window.models[Product.NFE], window.views[Product.NFE], window.detail
    qtbot.waitUntil(lambda: len(model.rows) >= 64, timeout=20_000)
    ModelTester(qtbot).check(model, force_py=True)  # every insert, removal and change stays consistent
    # The clerk scrolls down, picks a resumo and reads its Visualização.
    key = office.received[1]
    assert _row(window, key).row_kind is RowKind.SUMMARY
    position = _keys(window).index(key)
    view.scrollTo(model.index(position, 0), view.ScrollHint.PositionAtTop)
    view.selectRow(position)
    qtbot.waitUntil(lambda: pane.detail is not None and pane.detail.row.access_key == key, timeout=20_000)
    pane.tabs.setCurrentWidget(pane.preview)
    qtbot.waitUntil(lambda: pane.preview.currentWidget() is pane.pdf_view, timeout=20_000)
    top = row_identity(model.rows[view.rowAt(0)])
    assert view.verticalScrollBar().value() > 0

    # Meanwhile: the Ciência is registered, new NF-e arrive, another NF-e is cancelled.
    outcome = desk.request_manifestation(harness.company.id, key, "210210")
    assert outcome.accepted, outcome.message
    cancelled = office.received[2]
    harness.sandbox.publish_nfe_event(cancelled, "110111", justification="Cancelamento por erro de digitacao")
    arrived = _publish(harness, 3)

    # No key pressed: the new rows come in at their sorted place (the newest first), the changed ones in place.
    qtbot.waitUntil(lambda: set(arrived) <= set(_keys(window)), timeout=LIVE_MS)
    newest = sorted(arrived, key=lambda k: (_row(window, k).issued_at, _row(window, k).row_id), reverse=True)
    assert _keys(window)[:3] == newest
    qtbot.waitUntil(lambda: _row(window, key).manifestation is ManifestationState.CIENCIA, timeout=LIVE_MS)
    qtbot.waitUntil(lambda: _row(window, cancelled).cancelled_after_capture, timeout=LIVE_MS)
    assert len(_keys(window)) == len(set(_keys(window)))  # nothing twice
    # ... and the complete NF-e the Ciência brought replaces the resumo in the same row.
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.run_pending()
    qtbot.waitUntil(lambda: _row(window, key).row_kind is RowKind.COMPLETE, timeout=LIVE_MS)
    qtbot.waitUntil(lambda: model.total == len(model.rows), timeout=LIVE_MS)
    # The clerk's place: the same selection, the same first visible row, the detail of his row
    # read again (its manifestation, its complete NF-e) with its Visualização still on.
    assert _selected_keys(window) == [key]
    assert row_identity(model.rows[view.rowAt(0)]) == top
    qtbot.waitUntil(lambda: pane.detail is not None and pane.detail.row.row_kind is RowKind.COMPLETE, timeout=LIVE_MS)
    assert pane.tabs.currentWidget() is pane.preview
    qtbot.waitUntil(lambda: pane.preview.currentWidget() is pane.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: pane.pdf_document.status() is QPdfDocument.Status.Ready, timeout=10_000)

    # F5 keeps them too.
    rows_before = list(model.rows)
    rendered: list[object] = []
    pane.preview_wanted.connect(rendered.append)
    window.refresh()
    qtbot.waitUntil(lambda: not model.loading and window.count_label.text() != "Carregando…", timeout=10_000)
    assert list(model.rows) == rows_before
    assert _selected_keys(window) == [key]
    assert row_identity(model.rows[view.rowAt(0)]) == top
    assert pane.detail is not None and pane.detail.row.access_key == key
    assert pane.tabs.currentWidget() is pane.preview and pane.preview.currentWidget() is pane.pdf_view
    assert rendered == []  # the same document read again: its DANFE stays, not "Gerando…" and rendered anew


def test_left_alone_across_midnight_the_window_lists_the_next_days_documents(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    window = _window(qtbot, desk, tmp_path)
    window.day_clock.max_wait_ms = 100  # the fake clock jumps: look often (the real one waits for midnight)
    window.day_clock.start()
    today = window.filters.today()
    assert window.filters.date_to.date().toPython() == today
    assert window.filters.by_capture  # the default view: what was captured in the last 30 days
    # 23:50 in Brasília, then past midnight: the next day's NF-e are captured.
    harness.clock.set(datetime.combine(today, datetime.min.time(), tzinfo=UTC) + timedelta(hours=26, minutes=50))
    assert window.filters.today() == today
    harness.clock.advance(timedelta(minutes=20))
    tomorrow = window.filters.today()
    assert tomorrow == today + timedelta(days=1)
    harness.run_pending()
    arrived = _publish(harness, 2)
    qtbot.waitUntil(lambda: window.filters.date_to.date().toPython() == tomorrow, timeout=LIVE_MS)
    qtbot.waitUntil(lambda: set(arrived) <= set(_keys(window)), timeout=LIVE_MS)
    assert window.filters.date_from.date().toPython() == tomorrow - timedelta(days=29)
    # "Limpar filtros" and F5 use today too, not the day the window opened.
    window.filters.set_period(date(2026, 1, 1), date(2026, 1, 31))
    window.filters.clear()
    assert window.filters.date_to.date().toPython() == tomorrow


@pytest.fixture
def old_issues(tmp_path: Path) -> Iterator[tuple[Harness, list[str]]]:
    """30 NF-e captured today whose issue dates are in 2022-2024 (a supplier's backlog)."""
    with nfe_harness(tmp_path) as harness:
        publisher = harness.sandbox.publisher
        keys = []
        for index in range(30):
            issued = datetime(2022, 1, 10, 15, tzinfo=UTC) + timedelta(days=35 * index)
            keys.append(str(publisher.publish_issued_nfe(publisher.issue_nfe(SUPPLIER, RECIPIENT, at=issued)).key))
        harness.run_pending()
        yield harness, keys


def test_documents_captured_today_are_listed_whatever_their_issue_date(
    qtbot: QtBot, old_issues: tuple[Harness, list[str]], tmp_path: Path
) -> None:
    harness, keys = old_issues
    desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    desk.open()
    try:
        window = _window(qtbot, desk, tmp_path)
        model = window.models[Product.NFE]
        qtbot.waitUntil(lambda: len(model.rows) == 30, timeout=20_000)
        assert set(_keys(window)) == set(keys)
        assert {r.issued_at.year for r in model.rows if r.issued_at} == {2022, 2023, 2024}
        # By issue date the period hides them: the empty grid says how many and shows them.
        window.filters.period_by.setCurrentIndex(1)
        empty = window.empty_labels[Product.NFE]
        qtbot.waitUntil(lambda: "fora do período" in empty.text(), timeout=20_000)
        assert "Nenhuma NF-e no período escolhido." in empty.text()
        assert "Mostrar os 30 documentos fora do período" in empty.text()
        empty.linkActivated.emit("widen")
        qtbot.waitUntil(lambda: len(model.rows) == 30, timeout=20_000)
        assert window.filters.date_from.date().toPython() == date(2022, 1, 10)
        window.close()
    finally:
        desk.close()


def test_a_notice_heard_while_the_grid_reads_is_not_lost(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    """An arrival told while the grid's own read is under way (F5, a page, an update) comes in
    when that read ends, although that read saw the store before it: an office notification is
    sent once, and a clerk's grid must not wait for the next poll to show it (it did on CI)."""
    window = _window(qtbot, desk, tmp_path)
    model = window.models[Product.NFE]
    qtbot.waitUntil(lambda: model.live and window.tasks.pending == 0, timeout=20_000)
    window.live.timer.stop()  # only the notice can bring the arrival
    before = set(_keys(window))
    assert model.update(everything=True)  # F5: its read ends on the worker before the arrival...
    assert window.tasks._pool.waitForDone(20_000)  # ... its result waits for the GUI thread
    assert model.loading
    [arrived] = _publish(office.harness, 1)
    window.live.poke()  # the capture's notice, heard while the grid still merges the older read
    qtbot.waitUntil(lambda: arrived in _keys(window), timeout=LIVE_MS)
    assert set(_keys(window)) == before | {arrived}
    window.close()


def test_key_event_rows_made_apart_join_the_grid_on_screen(
    qtbot: QtBot, office: Office, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large folder's first opening: the documents are on screen before its key-event rows are
    built (on a thread apart), which then join the grid without a key."""
    from app.desk import key_snapshot
    from app.store.grid import GridRepository

    held = threading.Event()
    original = GridRepository.key_events

    def slow_key_events(self: GridRepository, *args: Any, **kwargs: Any) -> Any:
        held.wait(30)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(key_snapshot, "BUILD_INLINE_EVENTS", 0)
    monkeypatch.setattr(GridRepository, "key_events", slow_key_events)
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
    desk.open()
    try:
        window = _window(qtbot, desk, tmp_path)
        assert set(office.received) <= set(_keys(window))  # the documents, while the build waits
        assert office.event_only not in _keys(window)
        held.set()
        qtbot.waitUntil(lambda: office.event_only in _keys(window), timeout=LIVE_MS)
        assert _row(window, office.event_only).is_event_row
        window.close()
    finally:
        held.set()
        desk.close()
