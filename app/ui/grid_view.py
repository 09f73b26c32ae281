"""One product's grid as the main window shows it: the table view and its "nothing here" label."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QWidget

from app.core.products import Product
from app.ui import grid_columns
from app.ui.grid_model import DocumentTableModel


def grid_view(parent: QWidget, model: DocumentTableModel, product: Product) -> QTableView:
    """Rows selected whole (several at once), sortable, newest first, compact, its columns set up."""
    view = QTableView(parent)
    view.setObjectName(f"grid-{product.value}")
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    view.setSortingEnabled(True)
    view.horizontalHeader().setSortIndicator(0, Qt.SortOrder.DescendingOrder)
    view.setAlternatingRowColors(True)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    view.setWordWrap(False)
    grid_columns.set_up(view, model.columns)
    return view


def empty_label(view: QTableView, product: Product) -> QLabel:
    """The label over an empty grid (hidden until it says why the grid is empty)."""
    empty = QLabel(view.viewport())
    empty.setObjectName(f"empty-{product.value}")
    empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
    empty.setWordWrap(True)
    empty.setStyleSheet("color: #6b6b6b; font-size: 11pt;")
    empty.setVisible(False)
    return empty
