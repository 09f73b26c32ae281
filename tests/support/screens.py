"""The window as the tests open it (1366×768, its own settings file), and screens rendered for a
person to look at (the house rule), not compared: saved as PNG into the folder
``CAPTURA_SCREENSHOTS`` names, when it does."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.desk import Desk
from app.ui.main_window import MainWindow


def keep_screenshot(widget: QWidget, name: str) -> None:
    """``widget`` as it is on screen now, as ``name`` (a PNG file name), if screenshots are asked for."""
    folder = os.environ.get("CAPTURA_SCREENSHOTS")
    if folder:
        assert widget.grab().save(str(Path(folder) / name))


def open_window(qtbot: QtBot, desk: Desk, folder: Path) -> MainWindow:
    """The main window on ``desk`` (opened), shown at 1366×768 with its settings in ``folder``."""
    window = MainWindow(desk, settings=QSettings(str(folder / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    return window
