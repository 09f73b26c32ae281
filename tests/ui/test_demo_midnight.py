"""Issue 20's "done when": the demo window left alone across midnight (Brasília).

The demo's clock starts shortly before a midnight and runs sped up; nobody touches the window.
Its period ("capturados nos últimos 30 dias", the default) moves to the new day by itself, the
next day's NF-e appear as new rows, a resumo listed before midnight becomes the complete NF-e in
its row, and the Ciência registered for a new day's resumo shows in its row, all without a key.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.clock import to_brasilia
from app.core.manifestation import ManifestationState
from app.core.products import Product
from app.demo.environment import DemoOptions
from app.desk import Desk
from app.desk.days import brasilia_midnight
from app.desk.views import GridRow
from app.store.records import RowKind
from app.ui.main_window import MainWindow

# Three clock minutes per real second: from 23:20 to the first hourly query after midnight
# (about 00:25) and the Ciência after it is about 30 real seconds.
SPEED = 180.0
# The automatic Ciência waits 20 clock minutes (7 real seconds) after a resumo arrives, so a
# loaded machine sees the new day's resumos before their Ciência (the rule book's minimum is 5).
CIENCIA_WAIT = 20
BEFORE_MIDNIGHT = timedelta(minutes=40)  # the window opens (sandbox, certificates) well before it
WAIT_MS = 40_000  # per step: the clock's minutes are real seconds on a loaded machine


def _day(row: GridRow) -> date | None:
    return to_brasilia(row.issued_at).date() if row.issued_at is not None else None


def test_the_demo_window_left_alone_across_midnight_lists_the_next_day_and_keeps_rows_current(
    qtbot: QtBot, tmp_path: Path
) -> None:
    # A midnight of the past day (Brasília) so the sandbox's certificates are valid in real time too.
    midnight = brasilia_midnight(to_brasilia(datetime.now(UTC)).date())
    first_day = to_brasilia(midnight - BEFORE_MIDNIGHT).date()
    next_day = first_day + timedelta(days=1)
    desk = Desk(
        tmp_path / "dados-demo",
        demo=DemoOptions(speed=SPEED, start=midnight - BEFORE_MIDNIGHT, ciencia_wait_minutes=CIENCIA_WAIT),
    )
    window = MainWindow(desk, demo=True, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    try:
        model = window.models[Product.NFE]
        filters = window.filters
        # Before midnight: the backlog's resumos, in a period that ends on the first day.
        qtbot.waitUntil(lambda: any(r.row_kind is RowKind.SUMMARY for r in model.rows), timeout=WAIT_MS)
        assert desk.now() < midnight, f"the window opened after midnight ({to_brasilia(desk.now())})"
        assert filters.by_capture and filters.date_to.date().toPython() == first_day
        resumos = {r.access_key for r in model.rows if r.row_kind is RowKind.SUMMARY}
        assert all(_day(r) == first_day for r in model.rows)

        # Midnight passes; nobody touches the window.
        qtbot.waitUntil(lambda: filters.date_to.date().toPython() == next_day, timeout=WAIT_MS)
        assert filters.date_from.date().toPython() == next_day - timedelta(days=29)
        # The next hourly query: the new day's NF-e come in as new rows ...
        qtbot.waitUntil(lambda: any(_day(r) == next_day for r in model.rows), timeout=WAIT_MS)
        fresh = {r.access_key for r in model.rows if _day(r) == next_day and r.row_kind is RowKind.SUMMARY}
        assert fresh and not fresh & resumos
        # ... and a resumo listed before midnight is now the complete NF-e, in its row.
        qtbot.waitUntil(
            lambda: any(r.row_kind is RowKind.COMPLETE and r.access_key in resumos for r in model.rows),
            timeout=WAIT_MS,
        )
        # Twenty minutes later the automatic Ciência of a new day's resumo shows in its row.
        waiting = {
            r.access_key
            for r in model.rows
            if r.access_key in fresh and r.manifestation is not ManifestationState.CIENCIA
        }
        assert waiting, "the Ciência came before the new rows were first seen"
        qtbot.waitUntil(
            lambda: any(r.access_key in waiting and r.manifestation is ManifestationState.CIENCIA for r in model.rows),
            timeout=WAIT_MS,
        )
        keys = [r.access_key for r in model.rows]
        assert len(keys) == len(set(keys))  # nothing listed twice
        assert desk._demo is not None and desk._demo.verdict().violations == []  # the referee's
    finally:
        window.close()
        desk.close()
