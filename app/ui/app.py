"""Start the desktop application (and, for the demo, its background capture service)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app import APP_NAME
from app.demo.background import BackgroundDemo
from app.demo.environment import DemoEnvironment, DemoOptions
from app.ui.main_window import MainWindow


def run_gui(
    data_dir: Path,
    *,
    demo: bool = False,
    argv: list[str] | None = None,
    demo_options: DemoOptions | None = None,
    duration: float | None = None,
) -> int:
    """Open the window; with ``demo`` the sandbox and the service run on a worker thread until it closes.

    ``duration`` (seconds) closes the window by itself (smoke tests of the demo).
    """
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("CapturaDFe")
    window = MainWindow(data_dir, demo=demo)
    background = BackgroundDemo(DemoEnvironment(data_dir, demo_options)) if demo else None
    if background is not None:
        background.start()  # never on the GUI thread: building the demo takes seconds
    if duration is not None:
        QTimer.singleShot(int(duration * 1000), window.close)
    window.show()
    try:
        return int(app.exec())
    finally:
        if background is not None:
            background.stop()
