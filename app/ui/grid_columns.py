"""The grids' columns: initial widths from each column's sample, the default set that fits a
1366×768 screen (the rarely read ones hidden, shown again from the header's menu), and the
counterpart's column taking what is left of the width."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from app.ui.grid_model import Column

# Read in the detail pane, or needed only now and then: a right click on the header shows them.
HIDDEN_BY_DEFAULT = frozenset({"kind", "direction", "key", "carried", "ibs", "cbs", "is"})
FILLS = "counterpart"  # the one column that grows and shrinks with the window
MIN_FILL = 140
PADDING = 16
HEADER_KEY = "grid/{product}/columns"  # "header" before the columns fitted 1366×768: reset once
# The columns the kept arrangement was made with: Qt restores a header by position, so once the
# grid's columns change (the reform's IBS/CBS/IS, issue 23) an old arrangement would show and hide
# the wrong ones; it is then left for the defaults.
NAMES_KEY = "grid/{product}/column-names"


def set_up(view: QTableView, columns: Sequence[Column]) -> None:
    """Widths from the samples, the default set shown, and the header's menu of columns."""
    header = view.horizontalHeader()
    header.setSectionsMovable(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    metrics = view.fontMetrics()
    for index, column in enumerate(columns):
        header.resizeSection(index, metrics.horizontalAdvance(column.sample) + PADDING)
        header.setSectionHidden(index, column.name in HIDDEN_BY_DEFAULT)
    header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    header.customContextMenuRequested.connect(lambda position: _menu(view, columns, position))


def fit(view: QTableView, columns: Sequence[Column]) -> None:
    """The filling column takes the width the others leave (never under ``MIN_FILL``)."""
    header = view.horizontalHeader()
    names = [c.name for c in columns]
    if FILLS not in names:
        return
    fill = names.index(FILLS)
    others = sum(header.sectionSize(i) for i in range(header.count()) if i != fill and not header.isSectionHidden(i))
    header.resizeSection(fill, max(MIN_FILL, view.viewport().width() - others))


def restore(settings: QSettings, product: str, view: QTableView) -> bool:
    """The clerk's arrangement of this grid's columns, if kept: True when restored."""
    state = settings.value(HEADER_KEY.format(product=product))
    if settings.value(NAMES_KEY.format(product=product)) != _names(view):
        return False
    return isinstance(state, QByteArray) and view.horizontalHeader().restoreState(state)


def save(settings: QSettings, product: str, view: QTableView) -> None:
    settings.setValue(HEADER_KEY.format(product=product), view.horizontalHeader().saveState())
    settings.setValue(NAMES_KEY.format(product=product), _names(view))


def _names(view: QTableView) -> str:
    return ",".join(column.name for column in getattr(view.model(), "columns", ()))


def columns_menu(view: QTableView, columns: Sequence[Column]) -> QMenu:
    """A checkable entry per column: shown or hidden (the arrangement is kept with the window's)."""
    header = view.horizontalHeader()
    menu = QMenu(view)
    menu.setObjectName("columns-menu")
    for index, column in enumerate(columns):
        action = menu.addAction(column.header)
        action.setCheckable(True)
        action.setChecked(not header.isSectionHidden(index))
        action.toggled.connect(lambda on, i=index: header.setSectionHidden(i, not on))
    return menu


def _menu(view: QTableView, columns: Sequence[Column], position: Any) -> None:
    menu = columns_menu(view, columns)
    menu.popup(view.horizontalHeader().mapToGlobal(position))
