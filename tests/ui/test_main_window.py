from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar
from pytestqt.qtbot import QtBot

from app.ui.main_window import MainWindow


def test_demo_window_says_it_is_the_demo_and_names_the_data_folder(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow(tmp_path / "dados-demo", demo=True)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.windowTitle() == "Captura DF-e — Demonstração"
    status = window.findChild(QStatusBar)
    assert status is not None and str(tmp_path / "dados-demo") in status.currentMessage()
    heading = window.findChild(QLabel, "heading")
    assert heading is not None and "Demonstração" in heading.text()


def test_real_window_title(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow(tmp_path)
    qtbot.addWidget(window)
    assert window.windowTitle() == "Captura DF-e"
