"""Start the desktop application: the window over a desk that captures in the background."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app import APP_NAME
from app.desk import Desk
from app.ui.main_window import MainWindow

if TYPE_CHECKING:
    from app.core.clock import Clock


def run_gui(
    data_dir: Path,
    *,
    demo: bool = False,
    argv: list[str] | None = None,
    demo_options: object | None = None,
    duration: float | None = None,
    clock: Clock | None = None,
) -> int:
    """Open the window; the desk opens the data folder and starts capturing on a worker thread
    (with ``demo``, the sandbox and the demo companies too) and stops when the window closes.

    ``duration`` (seconds) closes the window by itself (smoke tests of the demo).
    """
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("CapturaDFe")
    if demo and demo_options is None:
        from app.desk.desk import default_demo_options

        demo_options = default_demo_options()
    desk = Desk(data_dir, clock=clock, demo=demo_options if demo else None)  # type: ignore[arg-type]
    window = MainWindow(desk, demo=demo)
    if duration is not None:
        QTimer.singleShot(int(duration * 1000), window.close)
    window.show()
    try:
        return int(app.exec())
    finally:
        window.tasks.wait()
        desk.close()
