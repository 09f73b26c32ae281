"""The window's menu bar and keys: Arquivo (Sair, Ctrl+Q), Empresas and Ferramentas
(``CompanyActions``), Documentos (Buscar pela chave, Ctrl+K; Retificar manifestação, enabled as the
menu opens), Relatórios (Créditos de IBS e CBS), Exibir, Ajuda (the first-run assistant).

Quitting asks first when this process runs the capture: closing the program stops it, while
closing the window (to the tray) lets it go on. An accountant expects the documents to keep
arriving, so the question says which choice does what.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMessageBox, QWidget

from app.ui.company_actions import CompanyActions
from app.ui.fetch_dialog import FetchByKey
from app.ui.first_run import FirstRun
from app.ui.reform_report_dialog import ReformReport
from app.ui.window_host import WindowHost

QUIT_TITLE = "Sair do Captura DF-e"
QUIT_TEXT = (
    "A captura em segundo plano roda dentro deste programa: ao sair, ela para, e nenhum documento "
    "novo é baixado até o programa ser aberto de novo."
)
QUIT_TRAY_TEXT = "Para continuar capturando, feche só a janela: o programa fica no ícone perto do relógio."
STOP = "Sair e parar a captura"
KEEP = "Continuar capturando na bandeja"


class WindowMenus(QObject):
    """Builds the menu bar in its order; ``quit_app`` ends the program (the tray's, when there is one)."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.quit_app: Callable[[], Any] = lambda: host.window().close()
        self.keep_in_tray: Callable[[], Any] | None = None  # the tray's: hide the window, capture on
        self.last_box: QMessageBox | None = None
        files = host.menuBar().addMenu("&Arquivo")
        self.quit = files.addAction("Sair", self.ask_quit)
        self.quit.setObjectName("quit")
        self.quit.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_Q))
        self.quit.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.company_actions = CompanyActions(host)
        self.fetch_by_key = FetchByKey(host)
        self.documents = host.menuBar().addMenu("&Documentos")
        self.fetch = self.documents.addAction("Buscar documento pela chave…", self.fetch_by_key.open)
        self.fetch.setObjectName("fetch-by-key")
        self.fetch.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_K))
        self.fetch.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.documents.addAction(host.manifestations.rectify)
        self.documents.aboutToShow.connect(host.manifestations.update_rectify)
        self.reform_report = ReformReport(host)
        self.reports = host.menuBar().addMenu("&Relatórios")
        self.ibs_cbs = self.reports.addAction("Créditos de IBS e CBS…", self.reform_report.open)
        self.ibs_cbs.setObjectName("ibs-cbs-report")
        view = host.menuBar().addMenu("E&xibir")
        view.addAction("Documentos", lambda: host.pages.setCurrentIndex(0))
        view.addAction("Painel de captura", lambda: host.pages.setCurrentIndex(1))
        view.addAction("Atualizar (F5)", host.refresh)
        self.first_run = FirstRun(host)
        self.help = host.menuBar().addMenu("Aj&uda")
        self.assistant = self.help.addAction("Assistente de primeiros passos…", self.first_run.open)
        self.assistant.setObjectName("first-run-action")

    def bind_keys(
        self, grid: QWidget, window: Mapping[Any, Callable[[], Any]], in_grid: Mapping[Any, Callable[[], Any]]
    ) -> None:
        """Shortcuts for the whole window, and those that act only while the grids have the focus."""
        for bindings, owner, context in (
            (window, self.host.window(), Qt.ShortcutContext.WindowShortcut),
            (in_grid, grid, Qt.ShortcutContext.WidgetWithChildrenShortcut),
        ):
            for key, slot in bindings.items():
                shortcut = QShortcut(QKeySequence(key), owner)
                shortcut.setContext(context)
                shortcut.activated.connect(slot)

    def ask_quit(self) -> None:
        """Sair: straight out when this process captures nothing; otherwise ask what the capture does."""
        host = self.host
        if host.opened is None or not host.writable or not host.desk.capturing:
            self.quit_app()
            return
        box = QMessageBox(QMessageBox.Icon.Question, QUIT_TITLE, QUIT_TEXT, parent=host.window())
        box.setObjectName("quit-question")
        stop = box.addButton(STOP, QMessageBox.ButtonRole.DestructiveRole)
        keep = None
        if self.keep_in_tray is not None:
            box.setInformativeText(QUIT_TRAY_TEXT)
            keep = box.addButton(KEEP, QMessageBox.ButtonRole.AcceptRole)
            box.setDefaultButton(keep)
        box.addButton(QMessageBox.StandardButton.Cancel)
        self.last_box = box

        def chosen(button: Any) -> None:
            if button is stop:
                self.quit_app()
            elif keep is not None and button is keep and self.keep_in_tray is not None:
                self.keep_in_tray()

        box.buttonClicked.connect(chosen)
        box.open()
