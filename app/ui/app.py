"""Start the desktop application: the window over a desk that captures in the background."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from app import APP_NAME
from app.desk import window_log
from app.ui.main_window import MainWindow
from app.ui.portuguese import install_portuguese
from app.ui.single_instance import SECOND_LAUNCH, SingleInstance
from app.ui.tray import Tray

if TYPE_CHECKING:
    from app.core.clock import Clock
    from app.desk.desk import Desk


def refuse_to_start(message: str) -> None:
    """The window cannot open on this data folder: say why in a box (no terminal to read)."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    QMessageBox.critical(None, APP_NAME, message)


class SessionEnd(QObject):
    """Windows logs off or shuts down: the capture stops gracefully right then (runs in flight
    finish and commit their lots, the cursors with them) and the window saves its state.

    Windows ends the process as soon as its session-end message is handled, so the code after
    ``app.exec()`` would never run: the stop happens in ``commitDataRequest`` (the session is
    ending: WM_QUERYENDSESSION) or, at the latest, ``aboutToQuit``. If another program then
    cancels the logoff, the app has quit anyway: the next login starts it again."""

    def __init__(self, app: QGuiApplication, window: MainWindow, tray: Tray) -> None:
        super().__init__(window)  # dies with the window, and its connections with it
        self.window, self.tray = window, tray
        self.ended = False
        app.commitDataRequest.connect(self.end)
        app.aboutToQuit.connect(self.end)

    def end(self, *_manager: object) -> None:
        if self.ended:
            return
        self.ended = True
        if not self.tray.quitting:
            self.tray.quit()  # the window closes for good (it saves its geometry and columns)
        self.window.tasks.close()
        desk = self.window.opened_desk
        if desk is not None:
            desk.close()  # idempotent: run_gui's own close after exec() finds it closed


def run_gui(
    data_dir: Path,
    *,
    demo: bool = False,
    argv: list[str] | None = None,
    demo_options: object | None = None,
    demo_speed: float | None = None,
    duration: float | None = None,
    clock: Clock | None = None,
    tray_only: bool = False,
) -> int:
    """Open the window; the desk opens the data folder and starts capturing on a worker thread
    (with ``demo``, the sandbox and the demo companies too) and stops when the window closes.

    ``demo_speed`` is the demo clock's speed-up (``demo_options``, a ``DemoOptions``, sets every
    option); ``duration`` (seconds) closes the window by itself (smoke tests of the demo);
    ``tray_only`` starts in the tray with the window hidden (start with Windows), where there is one.
    """
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("CapturaDFe")
    install_portuguese(app)
    instance = SingleInstance(data_dir)
    if not instance.claim():  # the window of this folder is already open: it was asked to show itself
        print(SECOND_LAUNCH.format(folder=data_dir), file=sys.stderr)
        return 0
    stop_log = window_log.start_window_log(data_dir)  # what goes wrong under pythonw lands in the data folder's log

    def make_desk() -> Desk:  # on the worker: the window is already on screen
        from app.desk.desk import Desk, demo_options_for

        options = (demo_options or demo_options_for(demo_speed)) if demo else None
        return Desk(data_dir, clock=clock, demo=options)  # type: ignore[arg-type]

    window = MainWindow(make_desk, demo=demo)
    tray = Tray(window)
    instance.activated.connect(tray.open_window)
    app.aboutToQuit.connect(window_log.closing)  # before the session's end closes the desk and its log
    if isinstance(app, QGuiApplication):  # always, with a window; the type says "core"
        SessionEnd(app, window, tray)
    if duration is not None:
        QTimer.singleShot(int(duration * 1000), tray.quit)
    if not (tray_only and tray.available):
        window.show()
    try:
        return int(app.exec())
    finally:
        stop_log()
        instance.close()
        window.tasks.wait()
        if window.opened_desk is not None:
            window.opened_desk.close()
