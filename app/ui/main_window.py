"""The main window: companies on the left, a grid per product, the detail of the selected row.

Everything it shows comes from the desk (``app.desk``) through :class:`Tasks`: the GUI thread
never waits on the database or the network. The window opens at once and fills in when the desk
has opened the data folder (and started the capture service) on a worker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import APP_NAME
from app.core.clock import BRASILIA
from app.core.products import Product
from app.desk.search import parse_search
from app.desk.views import OFFICE_BACK, OFFICE_LOST, CompanyLine, DocumentDetail, GridFilter, GridRow
from app.ui import grid_columns
from app.ui.company_list import ALL, CompanyList
from app.ui.dashboard import Dashboard
from app.ui.day_clock import DayClock
from app.ui.detail import DetailPane
from app.ui.file_actions import FileActions
from app.ui.filters import FilterBar
from app.ui.first_rows import AfterFirstRows
from app.ui.grid_model import ROW_ROLE, DocumentTableModel
from app.ui.grid_view import empty_label, grid_view
from app.ui.live import LiveGrids
from app.ui.manifest_actions import ManifestActions
from app.ui.portuguese import install_portuguese
from app.ui.qt_fixes import guard_none_refcount
from app.ui.status_line import StatusLine
from app.ui.tasks import Tasks
from app.ui.window_menus import WindowMenus

if TYPE_CHECKING:
    from app.desk.desk import Desk, Opened

log = logging.getLogger(__name__)
STATUS_REFRESH_MS = 5_000
NOTICE_DEBOUNCE_MS = 1_500


def _none(product: Product) -> str:
    """ "Nenhuma NF-e", "Nenhum CT-e" (a nota, o conhecimento)."""
    return f"{'Nenhum' if product is Product.CTE else 'Nenhuma'} {product.label}"


class MainWindow(QMainWindow):
    """The office's window over one desk; ``ready`` once the data folder is open."""

    notice = Signal(object)  # a capture notice, re-emitted on the GUI thread
    ready = Signal()

    def __init__(
        self, desk: Desk | Callable[[], Desk], *, demo: bool = False, settings: QSettings | None = None
    ) -> None:
        """``desk``, or a function that makes it: then even the desk's imports (the capture, the
        store, the protocols) happen on the worker that opens it, after the window is on screen."""
        super().__init__()
        guard_none_refcount()  # PySide6 6.12.0 leaks a reference to None per None given to Qt
        install_portuguese(QCoreApplication.instance())  # before the first widget: Qt's words, pt_BR
        self._desk: Desk | None = desk if hasattr(desk, "open") else None  # type: ignore[assignment]
        self._make_desk: Callable[[], Desk] | None = None if self._desk is not None else desk  # type: ignore[assignment]
        self._made_desk: Desk | None = None
        self._readable = False
        self.demo = demo
        self.settings = settings or QSettings()
        self.tasks = Tasks(self)
        self.tasks.on_error = self._background_error
        self.opened: Opened | None = None
        self.companies: list[CompanyLine] = []
        self._unsubscribe: Any = None
        self._closing = False
        self.keep_in_tray: Callable[[], bool] | None = None  # the tray's: True hides instead of closing
        title = f"{APP_NAME} — Demonstração" if demo else APP_NAME
        self.setWindowTitle(title)
        self.resize(1360, 820)
        self._dirty: set[Product] = set()
        self._arranged: set[Product] = set()  # grids whose columns the clerk arranged (restored)
        self._build()
        self.notice.connect(self._on_notice)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(STATUS_REFRESH_MS)
        self._status_timer.timeout.connect(self.refresh_companies)
        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.setInterval(NOTICE_DEBOUNCE_MS)
        self._notice_timer.timeout.connect(self._documents_arrived)
        self.statusBar().showMessage("Abrindo a pasta de dados…")
        self.tasks.run(self._open_desk, self._store_opened, self._open_failed)

    @property
    def desk(self) -> Desk:
        if self._desk is None:
            raise RuntimeError("A pasta de dados ainda não foi aberta.")
        return self._desk

    @property
    def opened_desk(self) -> Desk | None:
        """The desk, once made on the opening worker, delivered or not: a window ended before the
        opening reached it still has its desk (a demo, its keyring and threads) closed."""
        return self._desk or self._made_desk

    def _open_desk(self) -> tuple[Desk, dict[str, int]]:
        """The opening's first step, on a worker: the store (the first rows); the capture follows."""
        desk = self._desk or self._made_desk or (self._make_desk() if self._make_desk is not None else None)
        assert desk is not None
        self._made_desk = desk
        desk.open_store()
        return desk, {c.cnpj.value: c.id for c in desk.registered()}

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        central = QWidget(self)
        outer = QHBoxLayout(central)
        outer.setContentsMargins(6, 6, 6, 6)
        self.split = QSplitter(Qt.Orientation.Horizontal, central)
        self.company_list = CompanyList(self.settings, self.split)
        self.company_list.selected.connect(self._company_selected)
        self.company_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.pages = QTabWidget(self.split)
        self.pages.setObjectName("pages")
        right = QWidget(self.pages)
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        self.filters = FilterBar(self.settings, right)
        self.filters.changed.connect(self.apply_filters)
        self.search = self.filters.search
        self.kind = self.filters.kind
        column.addWidget(self.filters)
        self.banner = QLabel(right)
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel#banner { background: #fdecea; color: #5f1410; border: 1px solid #f3b8b2; padding: 6px; }"
        )
        self.banner.setVisible(False)
        column.addWidget(self.banner)
        self.vsplit = QSplitter(Qt.Orientation.Vertical, right)
        self.tabs = QTabWidget(self.vsplit)
        self.tabs.setObjectName("product-tabs")
        self.models: dict[Product, DocumentTableModel] = {}
        self.empty_labels: dict[Product, QLabel] = {}
        self.views: dict[Product, QTableView] = {}
        for product in Product:
            model = DocumentTableModel(self.tasks, self._desk, product, self._now)
            model.counted.connect(lambda total, p=product: self._counted(p, total))
            model.failed.connect(self._show_error)
            view = grid_view(self.tabs, model, product)
            view.selectionModel().selectionChanged.connect(lambda *_a, p=product: self._selection_changed(p))
            self.models[product] = model
            self.views[product] = view
            view.viewport().installEventFilter(self)
            self.empty_labels[product] = empty_label(view, product)
            model.loaded.connect(lambda p=product: self._show_empty(p))
            self.tabs.addTab(view, product.label)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.live = LiveGrids(self.tasks, self.models, self.views, self.show_detail, self)
        self.detail = DetailPane(self.vsplit)
        self.manifestations = ManifestActions(self)
        for view in self.views.values():  # a resumo's double click offers its Ciência
            view.doubleClicked.connect(
                lambda index, v=view: self.manifestations.double_clicked(
                    v.model().data(index, ROW_ROLE), self._open_detail
                )
            )
        self.files = FileActions(self)
        self.detail.manifest.connect(self.manifestations.manifest_selected)
        self.detail.save_xml.connect(self.files.save_xml)
        self.detail.save_pdf.connect(self.files.save_pdf)
        self.detail.preview_wanted.connect(self.files.render_preview)
        self.detail.retry.connect(self.manifestations.retry_selected)
        self.detail.open_related.connect(self.open_key)
        self.vsplit.setStretchFactor(0, 3)
        self.vsplit.setStretchFactor(1, 2)
        self.vsplit.setSizes([420, 200])  # at 768 pixels high, 15 rows of the grid and the detail below
        column.addWidget(self.vsplit)
        self.pages.addTab(right, "Documentos")
        self.dashboard = Dashboard(self.tasks, self.pages)
        self.dashboard.message.connect(lambda text: self.status_line.notice(text))
        self.pages.addTab(self.dashboard, "Painel de captura")
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([250, 1110])
        outer.addWidget(self.split)
        self.setCentralWidget(central)
        self.status_line: StatusLine = StatusLine(self, self.banner)
        self.folder_label = self.status_line.folder_label
        self.capture_label = self.status_line.capture_label
        self.count_label = self.status_line.count_label
        self.setStatusBar(self.status_line)
        self.menus = WindowMenus(self)
        column.insertWidget(1, self.menus.first_run.panel)  # no company yet: points to the assistant
        self.company_actions = self.menus.company_actions
        self.menus.bind_keys(
            self.tabs,
            {QKeySequence.StandardKey.Find: self.filters.focus_search, Qt.Key.Key_F5: self.refresh},
            {
                QKeySequence.StandardKey.Copy: self.copy_keys,
                Qt.Key.Key_Return: self._open_detail,
                Qt.Key.Key_Enter: self._open_detail,
            },
        )
        self._restore()

    # ------------------------------------------------------------------ opening

    def _now(self) -> Any:
        return self.desk.now() if self._readable else None

    def _store_opened(self, result: tuple[Desk, dict[str, int]]) -> None:
        """The current grid's first page (the company chosen last time), then the capture starts."""
        desk, registered = result
        self._desk = desk
        for model in self.models.values():
            model.desk = desk
        if self._closing:
            return
        self._readable = True  # its store is open: the grids read, the capture starts next
        self.filters.today = lambda: self.desk.now().astimezone(BRASILIA).date()
        self.filters.follow_today(self.filters.today(), emit=False)
        product = self.current_product()
        first = replace(self.current_filter(product), company_ids=self.company_list.remembered_ids(registered))

        def then() -> None:  # unless the window closed meanwhile
            if not self._closing:
                self._fetch_alerts(product, first)
                self.tasks.run(desk.open, self._opened, self._open_failed)

        AfterFirstRows(self.models[product], then)
        self.count_label.setText("Carregando…")
        self.live.load(product, first)

    def _opened(self, opened: Opened) -> None:
        if self._closing:
            return
        desk = self.desk
        self.opened = opened
        self.day_clock = DayClock(desk.now, desk.clock_factor, self)
        self.day_clock.turned.connect(self.filters.follow_today)  # the period follows today
        self.day_clock.start()
        self.live.start(desk)
        self.status_line.show_opened(
            desk.data_dir, read_only=opened.read_only, holder=opened.holder, capturing=desk.capturing
        )
        self._unsubscribe = self.desk.subscribe(self.notice.emit, office=True)  # other workstations too
        self.dashboard.attach(desk)
        self.company_actions.enable()
        self.refresh_companies(first=True)
        self._status_timer.start()
        self.ready.emit()

    def _open_failed(self, error: BaseException) -> None:
        message = getattr(error, "message", None) or str(error)
        self.statusBar().showMessage(f"Não foi possível abrir a pasta de dados: {message}")
        self.detail.clear(f"Não foi possível abrir a pasta de dados: {message}")

    @property
    def writable(self) -> bool:
        return self.opened is not None and not self.opened.read_only

    # ------------------------------------------------------------------ companies

    def refresh_companies(self, first: bool = False) -> None:
        if self.opened is None or self._closing:
            return
        self.tasks.run(self.desk.companies, lambda lines: self._companies(lines, first))

    def _companies(self, lines: list[CompanyLine], first: bool) -> None:
        self.companies = lines
        self.menus.first_run.companies_listed(lines, first)
        self.company_list.show_lines(lines, self.desk.now(), first=first)
        if first:
            self.apply_filters()

    def _company_selected(self, company_id: int) -> None:
        self.dashboard.set_company(None if company_id == ALL else company_id)
        self.company_actions.enable()
        self.apply_filters()

    # ------------------------------------------------------------------ grids

    def current_filter(self, product: Product) -> GridFilter:
        model = self.models[product]
        return self.filters.grid_filter(
            product, self.company_list.company_ids(), model.grid_filter.sort, model.grid_filter.descending
        )

    def current_product(self) -> Product:
        return list(Product)[self.tabs.currentIndex()]

    def apply_filters(self, *, force: bool = False) -> None:
        """Every grid takes the filters; the visible one loads now, the others when shown.

        A grid whose filter did not change is left alone (a field losing focus, the same text
        typed again) unless ``force`` (F5, documents arrived).
        """
        if self.opened is None:
            return
        self.filters.search_timer.stop()
        self._dirty = {p for p in Product if force or self.current_filter(p) != self.models[p].grid_filter}
        self._load_current()
        self.filters.save()

    def _load_current(self) -> None:
        product = self.current_product()
        if product in self._dirty:
            self._dirty.discard(product)
            grid_filter = self.current_filter(product)
            self.count_label.setText("Carregando…")
            if not self.live.load(product, grid_filter):  # keeps the selection when it can
                self.detail.clear()
            self._fetch_alerts(product, grid_filter)

    def _fetch_alerts(self, product: Product, grid_filter: GridFilter) -> None:
        self.tasks.run(lambda: self.desk.alerts(product, grid_filter.company_ids), self._show_alerts)

    def _tab_changed(self, _index: int) -> None:
        self.detail.set_product(self.current_product())  # no NFS-e taker button on the NF-e tab
        self._load_current()
        product = self.current_product()
        model = self.models[product]
        if model.total is not None:
            self._counted(product, model.total)

    def _show_empty(self, product: Product) -> None:
        """An empty grid says why: nothing matches, or this product is not captured yet."""
        label, model = self.empty_labels[product], self.models[product]
        if model.rows:
            label.setVisible(False)
            return
        if self.opened is not None and product not in self.desk.products():  # the service's, once started
            label.setText(f"A captura de {product.label} ainda não está disponível nesta versão.")
        elif problem := parse_search(model.grid_filter.search).key_problem:
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setText(problem)  # a mistyped or misread key: what is wrong with it, not "nenhuma"
        else:
            self.live.explain_empty(product, label, _none(product), self.filters.widen)
        label.setGeometry(self.views[product].viewport().rect())
        label.setVisible(True)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() is QEvent.Type.Resize:
            for product, view in self.views.items():
                if watched is view.viewport():
                    self.empty_labels[product].setGeometry(view.viewport().rect())
                    if product not in self._arranged:  # the clerk's own arrangement stays as left
                        grid_columns.fit(view, self.models[product].columns)
        return super().eventFilter(watched, event)

    def _counted(self, product: Product, total: int) -> None:
        if product is self.current_product():
            self.count_label.setText(f"{total:,} documento{'s' if total != 1 else ''}".replace(",", "."))

    def _show_alerts(self, alerts: Any) -> None:
        parts = []
        if alerts.cancelled_after_capture:
            parts.append(f"{alerts.cancelled_after_capture} nota(s) cancelada(s) depois de capturada(s)")
        if alerts.deadlines_within_5_days:
            parts.append(f"{alerts.deadlines_within_5_days} prazo(s) de manifestação vencendo em até 5 dias")
        if alerts.quarantined:
            parts.append(f"{alerts.quarantined} documento(s) ilegível(is) em quarentena")
        self.banner.setText("Atenção: " + "; ".join(parts) + "." if parts else "")
        self.banner.setVisible(bool(parts))

    def refresh(self) -> None:
        if self.status_line.offline:
            return  # nothing to read: what is on screen stays (the connection back refreshes it)
        self.refresh_companies()
        self.filters.follow_today(self.filters.today(), emit=False)
        self.apply_filters(force=True)

    def _on_notice(self, notice: Any) -> None:
        self.live.poke()
        if notice.kind == "documents":
            self._notice_timer.start()
        elif notice.kind in ("alert", "manifestation"):
            self.statusBar().showMessage(notice.message, 10_000)
        elif notice.kind in (OFFICE_LOST, OFFICE_BACK) and self.status_line.office_link(notice.kind, notice.message):
            self.refresh()  # back: the grids read in place what changed meanwhile (as F5), the list too

    def _documents_arrived(self) -> None:
        self.live.poke()  # the grids take them in place (app.ui.live)

    # ------------------------------------------------------------------ selection and detail

    def selected_rows(self, product: Product | None = None) -> list[GridRow]:
        product = product or self.current_product()
        view = self.views[product]
        indexes = sorted(view.selectionModel().selectedRows(), key=lambda i: i.row())
        return [view.model().data(i, ROW_ROLE) for i in indexes]

    def _selection_changed(self, product: Product) -> None:
        rows = self.selected_rows(product)
        if len(rows) != 1:
            self.detail.clear(
                "Selecione um documento para ver os detalhes." if not rows else f"{len(rows)} documentos selecionados."
            )
            if rows:
                self.manifestations.enable_batch(rows)
            return
        self.show_detail(rows[0])

    def show_detail(self, row: GridRow) -> None:
        desk = self.desk

        def read() -> tuple[DocumentDetail, bytes | None, str | None]:
            from app.desk.xmltext import pretty_xml  # lxml: on the worker, not at the window's start

            detail = desk.detail(row)
            try:
                xml: bytes | None = desk.xml(row)
            except Exception:  # noqa: BLE001 (no XML stored for it: the detail still shows)
                xml = None
            return detail, xml, pretty_xml(xml) if xml else None  # indented here, not on the GUI thread

        self.tasks.run(read, lambda result: self._detail_read(row, result))

    def _detail_read(self, row: GridRow, result: tuple[DocumentDetail, bytes | None, str | None]) -> None:
        rows = self.selected_rows(row.product)
        if len(rows) != 1 or rows[0].row_id != row.row_id:
            return  # the selection moved on
        detail, xml, text = result
        self.detail.show_detail(detail, xml, self.desk.now(), self.writable, text)

    def _open_detail(self) -> None:
        self.detail.tabs.setFocus()

    def open_key(self, product: Product, key: str) -> None:
        """Show one document by key in its product's tab (a CT-e's NF-e, an NF-e's CT-e)."""
        self.tabs.setCurrentIndex(list(Product).index(product))
        self.search.setText(key)
        self.apply_filters()

    def copy_keys(self) -> None:
        keys = [r.access_key for r in self.selected_rows() if r.access_key]
        if keys:
            QGuiApplication.clipboard().setText("\n".join(keys))
            self.statusBar().showMessage(f"{len(keys)} chave(s) copiada(s).", 5_000)

    # ------------------------------------------------------------------ errors, settings, closing

    def _show_error(self, message: str) -> None:
        self.status_line.error(message)

    def _background_error(self, error: BaseException) -> None:
        self._show_error(getattr(error, "message", None) or str(error))

    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        self._arranged = {p for p, view in self.views.items() if grid_columns.restore(self.settings, p.value, view)}

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.opened is not None and not self._status_timer.isActive():
            self.refresh()  # back from the tray: what arrived meanwhile
            self._status_timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._status_timer.stop()  # nobody sees the list in the tray (the tray looks, slower)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.keep_in_tray is not None and self.keep_in_tray():
            event.ignore()
            self.hide()  # the capture carries on; the tray's menu quits
            return
        self._closing = True
        self._status_timer.stop()
        self.live.stop()
        if hasattr(self, "day_clock"):
            self.day_clock.stop()
        self._notice_timer.stop()
        self.settings.setValue("window/geometry", self.saveGeometry())
        for product, view in self.views.items():
            grid_columns.save(self.settings, product.value, view)
        self.settings.sync()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.tasks.close()  # answers still queued would reach a desk closed right after the window
        super().closeEvent(event)
