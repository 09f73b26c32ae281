"""The tray: its menu rebuilt on aboutToShow, pause/resume of every capture, closing to the tray,
notifications where there is no tray; and a screenshot of the menu under Xvfb.

Offscreen there is no system tray: the menu and the policy are driven without one, and a real
``QSystemTrayIcon`` is made only where the test says it exists.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.capture.context import CaptureNotice
from app.core.cadence import Action
from app.core.products import Product
from app.desk import Desk
from app.ui.main_window import MainWindow
from app.ui.tray import HIDDEN_TEXT, Tray
from tests.conftest import show_artifacts
from tests.desk.conftest import Office
from tests.support.xvfb import run_under_xvfb

ROOT = Path(__file__).resolve().parents[2]
PAUSED = "Captura pausada pelo usuário."
# The offscreen plugin has no tray to tell about; a real desktop does not print this.
OFFSCREEN_TRAY = "No such signal QPlatformNativeInterface::systemTrayWindowChanged"
OFFSCREEN_RAISE = r"This plugin does not support raise\(\)"


@pytest.fixture
def window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> Iterator[MainWindow]:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    yield window
    window.keep_in_tray = None
    window.close()
    QApplication.setQuitOnLastWindowClosed(True)


def _opened_tray(qtbot: QtBot, window: MainWindow, **options: object) -> Tray:
    tray = Tray(window, **options)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: tray.state is not None, timeout=20_000)  # ready, then the first look
    return tray


def _open_menu(tray: Tray) -> list[str]:
    tray.menu.aboutToShow.emit()
    return tray.texts()


def test_the_menu_shows_the_next_query_and_pauses_and_resumes_every_capture(
    qtbot: QtBot, window: MainWindow, desk: Desk
) -> None:
    tray = Tray(window, system_tray=False)
    assert tray.icon is None and not tray.keeps_running()
    assert _open_menu(tray) == ["Abrir o Captura DF-e", "Abrindo a pasta de dados…", "Pausar todas", "Sair"]
    qtbot.waitUntil(lambda: tray.state is not None, timeout=10_000)
    texts = _open_menu(tray)
    assert texts[0] == "Abrir o Captura DF-e" and texts[-2:] == ["Pausar todas", "Sair"]
    assert texts[1].startswith("Próxima consulta: ") and "(DESTINATARIA EXEMPLO LTDA, " in texts[1]
    assert texts[2] == "1 empresa(s)"
    assert tray.action("tray-next") is not None and not tray.action("tray-next").isEnabled()  # type: ignore[union-attr]

    pause = tray.action("tray-pause")
    assert pause is not None and pause.isEnabled()
    pause.trigger()
    qtbot.waitUntil(lambda: tray.state is not None and tray.state.all_paused, timeout=10_000)
    assert window.statusBar().currentMessage().startswith("Captura de ")
    assert _open_menu(tray)[1:] == [
        "Captura pausada: nenhuma consulta até retomar",
        "1 empresa(s)",
        "Retomar todas",
        "Sair",
    ]
    window.refresh_companies()  # the badges say so, from the database
    qtbot.waitUntil(lambda: any(b.reason == PAUSED for line in window.companies for b in line.badges), timeout=10_000)

    resume = tray.action("tray-resume")
    assert resume is not None
    resume.trigger()
    qtbot.waitUntil(lambda: tray.state is not None and tray.state.paused == 0, timeout=10_000)
    assert "Pausar todas" in _open_menu(tray) and tray.action("tray-resume") is None
    assert all(b.action is not Action.DISABLED for line in desk.companies() for b in line.badges)


def test_a_look_asked_while_one_is_under_way_follows_it(qtbot: QtBot, window: MainWindow, desk: Desk) -> None:
    """The look a pause asks for, while another look's answer (read before the pause) is still on
    its way, is not dropped: the menu says "pausada" at once, not at the next minute's poll (the
    Windows lane's resume waited past 10 s for it)."""
    tray = _opened_tray(qtbot, window, system_tray=False)
    qtbot.waitUntil(lambda: window.tasks.pending == 0, timeout=20_000)
    tray.look()
    assert window.tasks._pool.waitForDone(20_000)  # its answer waits for the GUI thread
    assert desk.pause_all() >= 1
    tray.look()  # the pause's own look
    qtbot.waitUntil(lambda: tray.state is not None and tray.state.all_paused, timeout=10_000)
    assert desk.resume_all() >= 1


def test_without_a_system_tray_closing_the_window_closes_it(qtbot: QtBot, window: MainWindow) -> None:
    tray = _opened_tray(qtbot, window, system_tray=False)
    window.show()
    assert not tray.keeps_running()
    assert window.close() and not window.isVisible()


@pytest.mark.qt_log_ignore(OFFSCREEN_TRAY, OFFSCREEN_RAISE)
def test_with_a_tray_closing_hides_the_window_the_capture_goes_on_and_sair_quits(
    qtbot: QtBot, window: MainWindow, desk: Desk
) -> None:
    tray = _opened_tray(qtbot, window, system_tray=True)
    assert tray.icon is not None and tray.icon.isVisible() and tray.icon.contextMenu() is tray.menu
    window.show()
    qtbot.waitUntil(window.isVisible)
    assert not window.close()  # refused: hidden to the tray
    assert tray.shown[-1].text == HIDDEN_TEXT  # said the first time
    assert not window.isVisible() and window.opened is not None and desk.opened is not None
    assert not window._status_timer.isActive()  # no 5-s refresh of a list nobody sees
    tray.open_window()
    qtbot.waitUntil(window.isVisible)
    assert window._status_timer.isActive()
    assert not window.close() and [n.text for n in tray.shown].count(HIDDEN_TEXT) == 1  # said once
    tray.action("tray-quit").trigger()  # type: ignore[union-attr]
    assert tray.quitting and not window.isVisible() and not tray.icon.isVisible()
    assert not window._status_timer.isActive() and window._closing


def test_notifications_go_to_the_status_bar_where_there_is_no_tray(
    qtbot: QtBot, window: MainWindow, office: Office
) -> None:
    tray = _opened_tray(qtbot, window, system_tray=False)
    clock = office.harness.clock
    tray.tell()  # the first look's news: the NF-e cancelled after capture
    assert [n.title for n in tray.shown] == ["NF-e cancelada"]
    assert window.statusBar().currentMessage().startswith("NF-e cancelada: 1 NF-e cancelada(s) pelo emitente")
    window.notice.emit(CaptureNotice("documents", office.harness.company.id, Product.NFE, "2 documento(s)", 2))
    clock.advance(timedelta(minutes=3))
    tray.tell()
    assert window.statusBar().currentMessage() == "Novos documentos: DESTINATARIA EXEMPLO LTDA: 2 documentos novos."
    tray.notifications_enabled = False
    window.notice.emit(CaptureNotice("documents", office.harness.company.id, Product.NFE, "1 documento(s)", 1))
    clock.advance(timedelta(minutes=3))
    tray.tell()
    assert len(tray.shown) == 2


# ---------------------------------------------------------------------- the screenshot


def test_a_screenshot_of_the_tray_menu_under_xvfb(tmp_path: Path) -> None:
    out = show_artifacts("Menu da bandeja (Xvfb)", tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    shot = run_under_xvfb([__file__, str(out), str(tmp_path / "dados")], timeout=240)
    assert shot.returncode == 0, shot.stderr[-3000:]
    png = out / "bandeja-menu.png"
    assert png.stat().st_size > 1000


def _screenshot(out: Path, base: Path) -> int:
    """Runs in the Xvfb child: a data folder filled by capture, the window, the menu popped up."""
    from PySide6.QtCore import QPoint

    from tests.desk.conftest import fill
    from tests.support.nfe_harness import nfe_harness
    from tests.ui.screenshots import wait

    app = QApplication.instance() or QApplication(sys.argv[:1])
    base.mkdir(parents=True, exist_ok=True)
    with nfe_harness(base) as harness:
        fill(harness)
        desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
        desk.open()
        window = MainWindow(desk, settings=QSettings(str(base / "ui.ini"), QSettings.Format.IniFormat))
        tray = Tray(window, system_tray=False)

        wait(lambda: tray.state is not None)
        tray.popup_at(QPoint(40, 40))
        wait(lambda: tray.menu.isVisible() and tray.state is not None and not tray._looking)
        app.processEvents()
        tray.menu.grab().save(str(out / "bandeja-menu.png"))
        tray.menu.hide()
        desk.pause_all()
        tray.look()
        wait(lambda: tray.state is not None and tray.state.all_paused)
        tray.popup_at(QPoint(40, 40))
        wait(lambda: tray.menu.isVisible() and not tray._looking)
        app.processEvents()
        tray.menu.grab().save(str(out / "bandeja-menu-pausada.png"))
        tray.menu.hide()
        window.close()
        desk.close()
    return 0


if __name__ == "__main__":
    sys.exit(_screenshot(Path(sys.argv[1]), Path(sys.argv[2])))


def test_the_settings_switch_turns_notifications_off(
    qtbot: QtBot, window: MainWindow, desk: Desk, office: Office
) -> None:
    from dataclasses import replace

    from app.desk import preferences

    tray = _opened_tray(qtbot, window, system_tray=False)
    assert tray.notifications_enabled
    preferences.save(desk, replace(preferences.read(desk), notifications=False))  # Configurações > Salvar
    told = list(tray.shown)
    tray.state = None
    tray.look()
    qtbot.waitUntil(lambda: tray.state is not None, timeout=20_000)
    assert not tray.notifications_enabled
    window.notice.emit(CaptureNotice("documents", office.harness.company.id, Product.NFE, "3", 3))
    office.harness.clock.advance(timedelta(minutes=3))
    tray.tell()
    assert tray.shown == told  # nothing more is told
