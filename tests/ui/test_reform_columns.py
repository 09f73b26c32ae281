"""The grid's IBS, CBS and IS columns (issue 23): in every product's grid, hidden by default, the
values as money and an unreadable value said as such (never "-" nor zero)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from app.core.products import Product
from app.desk.grid import key_event_row
from app.store.records import KeyEvents
from app.ui.grid_columns import HIDDEN_BY_DEFAULT
from app.ui.grid_model import COLUMNS, display, sort_value

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
