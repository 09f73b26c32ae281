"""Start the desktop application: the window over a desk that captures in the background."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app import APP_NAME
from app.ui.main_window import MainWindow

if TYPE_CHECKING:
    from app.core.clock import Clock
    from app.desk.desk import Desk


def run_gui(
    data_dir: Path,
    *,
    demo: bool = False,
    argv: list[str] | None = None,
    demo_options: object | None = None,
    demo_speed: float | None = None,
    duration: float | None = None,
    clock: Clock | None = None,
) -> int:
    """Open the window; the desk opens the data folder and starts capturing on a worker thread
    (with ``demo``, the sandbox and the demo companies too) and stops when the window closes.

    ``demo_speed`` is the demo clock's speed-up (``demo_options``, a ``DemoOptions``, sets every
    option); ``duration`` (seconds) closes the window by itself (smoke tests of the demo).
    """
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("CapturaDFe")

    def make_desk() -> Desk:  # on the worker: the window is already on screen
        from app.desk.desk import Desk, demo_options_for

        options = (demo_options or demo_options_for(demo_speed)) if demo else None
        return Desk(data_dir, clock=clock, demo=options)  # type: ignore[arg-type]

    window = MainWindow(make_desk, demo=demo)
    if duration is not None:
        QTimer.singleShot(int(duration * 1000), window.close)
    window.show()
    try:
        return int(app.exec())
    finally:
        window.tasks.wait()
        if window.opened_desk is not None:
            window.opened_desk.close()
