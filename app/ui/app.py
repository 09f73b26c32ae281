"""Start the desktop application."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app import APP_NAME
from app.ui.main_window import MainWindow


def run_gui(data_dir: Path, *, demo: bool = False, argv: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("CapturaDFe")
    window = MainWindow(data_dir, demo=demo)
    window.show()
    return int(app.exec())
