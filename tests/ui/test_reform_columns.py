"""The grid's IBS, CBS and IS columns (issue 23): in every product's grid, hidden by default, the
values as money and an unreadable value said as such (never "-" nor zero); an arrangement kept
for other columns is left, not restored by position onto the new ones."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.desk.grid import key_event_row
from app.store.records import KeyEvents
from app.ui import grid_columns
from app.ui.grid_columns import HIDDEN_BY_DEFAULT
from app.ui.grid_model import COLUMNS, Column, display, sort_value

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)


def test_every_grid_has_the_reform_columns_hidden_by_default() -> None:
    for product in Product:
        names = [c.name for c in COLUMNS[product]]
        assert {"ibs", "cbs", "is"} <= set(names), product
    assert {"ibs", "cbs", "is"} <= HIDDEN_BY_DEFAULT


def test_values_unknown_and_unreadable() -> None:
    base = key_event_row(KeyEvents(-1, 1, Product.NFE, "3" * 44, None, None, 0, "110110", None, False))
    row = replace(base, ibs_cents=123_456, cbs_cents=7, is_cents=None)
    assert [display(row, c, NOW) for c in ("ibs", "cbs", "is")] == ["R$ 1.234,56", "R$ 0,07", "-"]
    assert sort_value(row, "ibs") == 123_456
    unreadable = replace(base, reform_unreadable=True, cbs_cents=100)
    assert [display(unreadable, c, NOW) for c in ("ibs", "cbs")] == ["ilegível", "R$ 1,00"]


class _Model(QStandardItemModel):
    def __init__(self, columns: tuple[Column, ...]) -> None:
        super().__init__(1, len(columns))
        self.columns = columns


def test_an_arrangement_kept_for_other_columns_is_not_restored(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    before = tuple(c for c in COLUMNS[Product.NFE] if c.name not in ("ibs", "cbs", "is"))  # an older version's
    old = QTableView()
    qtbot.addWidget(old)
    old.setModel(_Model(before))
    old.horizontalHeader().setSectionHidden(len(before) - 1, False)  # the key shown, by position
    grid_columns.save(settings, "nfe", old)
    now = QTableView()
    qtbot.addWidget(now)
    now.setModel(_Model(COLUMNS[Product.NFE]))
    grid_columns.set_up(now, COLUMNS[Product.NFE])
    assert not grid_columns.restore(settings, "nfe", now)  # by position it would show IBS, hide the key
    names = [c.name for c in COLUMNS[Product.NFE]]
    assert now.horizontalHeader().isSectionHidden(names.index("ibs"))
    now.horizontalHeader().setSectionHidden(names.index("cbs"), False)
    grid_columns.save(settings, "nfe", now)
    again = QTableView()
    qtbot.addWidget(again)
    again.setModel(_Model(COLUMNS[Product.NFE]))
    assert grid_columns.restore(settings, "nfe", again)
    assert not again.horizontalHeader().isSectionHidden(names.index("cbs"))
