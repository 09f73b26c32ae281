"""The main window. An empty shell for now: the grids, previews and tray arrive with their issues."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QStatusBar, QVBoxLayout, QWidget

from app import APP_NAME, __version__


class MainWindow(QMainWindow):
    """Top-level window; shows which data folder is in use and whether this is the demo."""

    def __init__(self, data_dir: Path, *, demo: bool = False) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.demo = demo
        title = f"{APP_NAME} — Demonstração" if demo else APP_NAME
        self.setWindowTitle(title)
        self.resize(1100, 700)

        central = QWidget(self)
        layout = QVBoxLayout(central)
        heading = QLabel(f"<h2>{title}</h2>", central)
        heading.setObjectName("heading")
        heading.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(heading)
        intro = QLabel(
            "Captura automática de NF-e, CT-e e NFS-e emitidas contra as empresas do escritório.\n"
            "Cadastre as empresas e seus certificados A1 para começar.",
            central,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addStretch(1)
        self.setCentralWidget(central)

        status = QStatusBar(self)
        status.showMessage(f"Pasta de dados: {data_dir}   ·   versão {__version__}")
        self.setStatusBar(status)
