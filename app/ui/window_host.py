"""What the window's action groups (companies, manifestation, files) need from the window.

A Protocol instead of the window's class, so the action modules never import ``main_window``
(which builds them): no import cycle, and each group says what it depends on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenuBar, QStatusBar, QTabWidget, QWidget

    from app.core.products import Product
    from app.desk.desk import Desk, Opened
    from app.desk.views import GridRow
    from app.ui.company_list import CompanyList
    from app.ui.detail import DetailPane
    from app.ui.grid_model import DocumentTableModel
    from app.ui.tasks import Tasks


class RectifyOffer(Protocol):
    """The manifestation actions as the menus see them: the Retificar entry and its check."""

    rectify: QAction

    def update_rectify(self) -> None: ...


class WindowHost(Protocol):
    """The main window as its action groups see it."""

    tasks: Tasks
    settings: QSettings
    opened: Opened | None
    company_list: CompanyList
    detail: DetailPane
    models: dict[Product, DocumentTableModel]
    pages: QTabWidget

    @property
    def desk(self) -> Desk: ...

    @property
    def writable(self) -> bool: ...

    @property
    def manifestations(self) -> RectifyOffer: ...

    def window(self) -> QWidget: ...

    def menuBar(self) -> QMenuBar: ...

    def statusBar(self) -> QStatusBar: ...

    def selected_rows(self, product: Product | None = None) -> list[GridRow]: ...

    def current_product(self) -> Product: ...

    def show_detail(self, row: GridRow) -> None: ...

    def refresh_companies(self, first: bool = False) -> None: ...

    def apply_filters(self, *, force: bool = False) -> None: ...

    def refresh(self) -> None: ...

    def open_key(self, product: Product, key: str) -> None: ...
