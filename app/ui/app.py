"""Start the desktop application: the window over a desk that captures in the background."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app import APP_NAME
from app.ui.main_window import MainWindow
from app.ui.single_instance import SECOND_LAUNCH, SingleInstance
from app.ui.tray import Tray

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
    instance = SingleInstance(data_dir)
    if not instance.claim():  # the window of this folder is already open: it was asked to show itself
        print(SECOND_LAUNCH.format(folder=data_dir), file=sys.stderr)
        return 0

    def make_desk() -> Desk:  # on the worker: the window is already on screen
        from app.desk.desk import Desk, demo_options_for

        options = (demo_options or demo_options_for(demo_speed)) if demo else None
        return Desk(data_dir, clock=clock, demo=options)  # type: ignore[arg-type]

    window = MainWindow(make_desk, demo=demo)
    tray = Tray(window)
    instance.activated.connect(tray.open_window)
    if duration is not None:
        QTimer.singleShot(int(duration * 1000), tray.quit)
    window.show()
    try:
        return int(app.exec())
    finally:
        instance.close()
        window.tasks.wait()
        if window.opened_desk is not None:
            window.opened_desk.close()
