"""A read-only window is connected too (#24): the Painel's "Estações conectadas" lists it.

``capture --daemon`` runs on a data folder (a real process, the real command line); a window
opened on the same folder is read-only (the daemon holds the folder) and runs no capture node,
yet it beats its own presence (``app.desk.presence_beat``): the Painel lists both, the daemon
capturing and this window "here"; a clean close removes the window's line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QTabWidget
from pytestqt.qtbot import QtBot

from app.config.paths import database_path
from app.core.clock import SystemClock
from app.desk import Desk
from app.store.db import open_database
from app.store.presence import Presence
from tests.support.screens import keep_screenshot, open_window
from tests.support.test_keyring import BACKEND

ROOT = Path(__file__).resolve().parents[2]


def test_a_read_only_window_is_listed_beside_the_daemon_that_holds_its_folder(qtbot: QtBot, tmp_path: Path) -> None:
    data_dir = tmp_path / "dados"
    env = {key: value for key, value in os.environ.items() if key != "CAPTURA_DATABASE"}
    env["PYTHON_KEYRING_BACKEND"] = BACKEND
    log = tmp_path / "daemon.log"
    with open(log, "wb") as output:
        daemon = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), "--data-dir", str(data_dir), "capture", "--daemon"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        started = lambda: "Ctrl+C" in log.read_text(errors="replace") or daemon.poll() is not None  # noqa: E731
        qtbot.waitUntil(started, timeout=60_000)
        assert daemon.poll() is None, log.read_text(errors="replace")
        desk = Desk(data_dir, clock=SystemClock())
        assert desk.open().read_only  # the daemon holds the folder
        try:
            stations = {s.pid: s for s in desk.capture_node().stations}
            assert set(stations) == {daemon.pid, os.getpid()}, stations
            assert stations[daemon.pid].capturing and not stations[daemon.pid].here
            assert stations[os.getpid()].here and not stations[os.getpid()].capturing

            window = open_window(qtbot, desk, tmp_path)
            window.pages.setCurrentIndex(1)  # the Painel
            table = window.dashboard.stations_table
            [tabs] = [t for t in window.findChildren(QTabWidget) if t.indexOf(table) >= 0]
            tabs.setCurrentWidget(table)
            qtbot.waitUntil(lambda: table.rowCount() == 2, timeout=20_000)
            assert table.isVisible()
            assert window.width() == 1366  # the read-only holder's long description does not widen it
            keep_screenshot(window, "painel-estacoes-janela-somente-leitura.png")
            window.close()
        finally:
            desk.close()
        with open_database(database_path(data_dir), clock=SystemClock()) as db:  # the window's line is gone
            assert [c.pid for c in Presence(db).connected(db.clock.now())] == [daemon.pid]
    finally:
        if sys.platform == "win32":  # no console to send Ctrl+Break to: ended (the crash tests stop it gracefully)
            daemon.kill()
        else:
            daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
