"""The window's menus and Qt's own words: Arquivo > Sair asks what happens to the capture, and
message boxes, button boxes and the calendar speak Portuguese."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QCalendarWidget, QDialogButtonBox, QMessageBox
from pytestqt.qtbot import QtBot

from app.desk import Desk
from app.ui.main_window import MainWindow
from app.ui.portuguese import install_portuguese
from app.ui.window_menus import KEEP, STOP
from tests.conftest import show_artifacts
from tests.desk.conftest import Office


def _window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> MainWindow:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.opened is not None, timeout=20_000)
    return window


@pytest.fixture
def capturing_desk(office: Office) -> Iterator[Desk]:
    """A desk whose process runs the capture service, as the real window's does."""
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock)
    desk.open()
    try:
        yield desk
    finally:
        desk.close()


def test_qt_speaks_portuguese_in_boxes_buttons_and_the_calendar(qapp: QApplication) -> None:
    assert install_portuguese(qapp)
    box = QMessageBox(
        QMessageBox.Icon.Question, "t", "x", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
    )
    assert sorted(b.text().replace("&", "") for b in box.buttons()) == ["Não", "Sim"]
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    assert buttons.button(QDialogButtonBox.StandardButton.Cancel).text() == "Cancelar"
    calendar = QCalendarWidget()
    assert calendar.locale().monthName(1) == "janeiro"
    assert calendar.locale().dayName(1).startswith("segunda")
    assert QLocale().toString(1234.5, "f", 2) == "1.234,50"
    assert install_portuguese(qapp)  # twice: no second translator


def test_sair_without_a_capture_of_its_own_closes_at_once(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    assert window.menus.quit.shortcut() == QKeySequence("Ctrl+Q")
    assert window.menuBar().actions()[0].text() == "&Arquivo"
    window.menus.quit.trigger()
    qtbot.waitUntil(lambda: not window.isVisible())
    assert window.menus.last_box is None  # nothing captures here: nothing to ask


def test_sair_asks_whether_the_capture_stops_too(qtbot: QtBot, capturing_desk: Desk, tmp_path: Path) -> None:
    window = _window(qtbot, capturing_desk, tmp_path)
    hidden: list[bool] = []
    window.menus.keep_in_tray = lambda: hidden.append(True)  # what the tray sets where there is one
    window.menus.quit.trigger()
    box = window.menus.last_box
    assert box is not None and box.isVisible()
    texts = [b.text() for b in box.buttons()]
    assert STOP in texts and KEEP in texts and "Cancelar" in texts
    assert "ao sair, ela para" in box.text()
    shots = show_artifacts("Pergunta ao sair", tmp_path / "telas")
    shots.mkdir()
    window.resize(1366, 768)
    box.grab().save(str(shots / "sair.png"))
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert window.isVisible() and not hidden
    window.menus.quit.trigger()
    keep = next(b for b in window.menus.last_box.buttons() if b.text() == KEEP)  # type: ignore[union-attr]
    keep.click()
    assert hidden == [True] and window.isVisible()
    window.menus.quit.trigger()
    stop = next(b for b in window.menus.last_box.buttons() if b.text() == STOP)  # type: ignore[union-attr]
    stop.click()
    qtbot.waitUntil(lambda: not window.isVisible())
