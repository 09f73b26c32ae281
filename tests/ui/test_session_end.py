"""The window when Windows ends the session (logoff, shutdown): Qt turns WM_QUERYENDSESSION into
``commitDataRequest`` and the end into ``aboutToQuit``; the capture must stop gracefully then,
because Windows ends the process right after. Driven here by emitting the signal."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.desk import Desk
from app.ui.app import SessionEnd
from app.ui.main_window import MainWindow
from app.ui.tray import Tray
from tests.desk.conftest import Office


def test_the_session_ending_stops_the_capture_and_saves_the_window(
    qtbot: QtBot, office: Office, tmp_path: Path
) -> None:
    capturing = Desk(office.harness.office.data_dir, clock=office.harness.clock, owner="sessão")
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(capturing, settings=settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: capturing.capturing, timeout=20_000)
    tray = Tray(window, system_tray=False)
    ending = SessionEnd(QApplication.instance(), window, tray)  # type: ignore[arg-type]
    try:
        QApplication.instance().aboutToQuit.emit()  # type: ignore[union-attr]

        QApplication.processEvents()  # after commitDataRequest the loop runs on: late answers are dropped
        assert ending.ended and tray.quitting and window.tasks.pending == 0
        assert not capturing.capturing and capturing.opened is None  # stopped and closed, not killed
        assert settings.value("window/geometry") is not None  # the window saved its state on the way
        QApplication.instance().aboutToQuit.emit()  # type: ignore[union-attr]  # once is enough
    finally:
        capturing.close()
        QApplication.setQuitOnLastWindowClosed(True)
