"""The window's menu bar: Empresas and Ferramentas (``CompanyActions``), Exibir."""

from __future__ import annotations

from PySide6.QtCore import QObject

from app.ui.company_actions import CompanyActions
from app.ui.window_host import WindowHost


class WindowMenus(QObject):
    """Builds the menu bar in its order; the company actions keep their own object."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.company_actions = CompanyActions(host)
        view = host.menuBar().addMenu("E&xibir")
        view.addAction("Documentos", lambda: host.pages.setCurrentIndex(0))
        view.addAction("Painel de captura", lambda: host.pages.setCurrentIndex(1))
        view.addAction("Atualizar (F5)", host.refresh)
