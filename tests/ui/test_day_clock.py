"""The day on the desk's clock, and the period that follows it unless the clerk set its dates."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QDate, QSettings
from pytestqt.qtbot import QtBot

from app.core.clock import FakeClock
from app.ui.day_clock import MAX_WAIT_MS, DayClock
from app.ui.filters import FilterBar, default_period


def test_the_timer_waits_for_the_clocks_next_midnight_and_says_the_day_turned(qtbot: QtBot) -> None:
    clock = FakeClock(datetime(2026, 11, 3, 2, 59, 59, tzinfo=UTC))  # 23:59:59 in Brasília
    day = DayClock(clock.now, lambda: 1.0)
    assert day.today() == date(2026, 11, 2)
    assert day.wait_ms() == 1_001  # one second (and a millisecond past it)
    clock.set(datetime(2026, 11, 2, 15, tzinfo=UTC))  # noon: 12 h away, capped
    assert day.wait_ms() == MAX_WAIT_MS
    fast = DayClock(clock.now, lambda: 3600.0)  # a demo clock: an hour per second
    assert fast.wait_ms() == 12_001
    day.max_wait_ms = 50
    day.start()
    clock.set(datetime(2026, 11, 3, 3, 0, 1, tzinfo=UTC))  # the fake clock jumps past midnight
    with qtbot.waitSignal(day.turned, timeout=5_000) as turned:
        pass
    assert turned.args == [date(2026, 11, 3)]
    day.stop()


def test_the_period_follows_today_on_the_ends_the_clerk_did_not_set(qtbot: QtBot, tmp_path: Path) -> None:
    bar = FilterBar(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(bar)
    today = date(2026, 11, 2)
    bar.today = lambda: today
    bar.follow_today(today, emit=False)
    assert bar.by_capture and (bar.date_from.date().toPython(), bar.date_to.date().toPython()) == (
        today - timedelta(days=29),
        today,
    )
    with qtbot.waitSignal(bar.changed, timeout=1_000):
        assert bar.follow_today(today + timedelta(days=1))
    bar.date_from.setDate(QDate(2026, 1, 1))  # the clerk sets the start: it stays
    assert bar.follow_today(today + timedelta(days=2))
    assert bar.date_from.date().toPython() == date(2026, 1, 1)
    assert bar.date_to.date().toPython() == today + timedelta(days=2)
    bar.period_by.setCurrentIndex(1)  # by issue date: the start stays, the end follows
    assert bar.date_from.date().toPython() == date(2026, 1, 1)
    bar.clear()  # back to the default view of today
    assert bar.by_capture and bar.date_from.date().toPython() == today - timedelta(days=29)
    assert default_period(date(2026, 12, 1), by_capture=True) == (date(2026, 11, 2), date(2026, 12, 1))
