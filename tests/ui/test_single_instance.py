"""One window per data folder: a real second launch hands over to the first and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.ui.single_instance import SingleInstance, server_name

ROOT = Path(__file__).resolve().parents[2]


def _launch(data_dir: Path) -> subprocess.Popen[str]:
    """``python main.py --data-dir`` in its own process, as a user's second double-click."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "main.py", "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_name_depends_on_the_data_folder(tmp_path: Path) -> None:
    assert server_name(tmp_path / "a") == server_name(tmp_path / "x" / ".." / "a")
    assert server_name(tmp_path / "a") != server_name(tmp_path / "b")


def test_a_second_launch_raises_the_first_and_exits_with_a_portuguese_line(qtbot: QtBot, tmp_path: Path) -> None:
    data_dir = tmp_path / "dados"
    data_dir.mkdir()
    first = SingleInstance(data_dir)
    assert first.claim()
    try:
        with qtbot.waitSignal(first.activated, timeout=60_000):
            second = _launch(data_dir)
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=60_000)
        _out, err = second.communicate()
        assert second.returncode == 0, err
        assert f"O Captura DF-e já está aberto para a pasta de dados {data_dir}" in err
        assert "a janela dele foi trazida para a frente" in err
        assert not (data_dir / "captura.sqlite3").exists()  # it opened nothing of the folder
    finally:
        first.close()


def test_another_folder_is_another_instance_and_a_closed_one_frees_its_name(qtbot: QtBot, tmp_path: Path) -> None:
    one, other = tmp_path / "um", tmp_path / "outro"
    first = SingleInstance(one)
    assert first.claim()
    try:
        separate = SingleInstance(other)
        assert separate.claim()  # a different folder: its own instance
        separate.close()
        # The same folder: handed over. A second launch is another process, running beside this
        # one's event loop: a thread here. Called inline, its hand-over would write and hang up
        # before this loop accepts the connection, and Windows' pipe (under Wine) drops what the
        # client wrote once it has hung up (the subprocess test above covers the real launch).
        handed: list[bool] = []
        second = threading.Thread(target=lambda: handed.append(SingleInstance(one).claim()))
        with qtbot.waitSignal(first.activated, timeout=10_000):
            second.start()
        second.join(10)
        assert handed == [False]
    finally:
        first.close()
    again = SingleInstance(one)
    assert again.claim()  # the first closed: the name is free again
    again.close()


@pytest.mark.qt_log_ignore(r"This plugin does not support raise\(\)")  # offscreen only
def test_the_window_of_run_gui_is_shown_again_when_the_folder_is_launched_twice(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui.app import run_gui
    from app.ui.main_window import MainWindow

    data_dir = tmp_path / "dados"
    seen: dict[str, object] = {}
    poll = QTimer()
    poll.setInterval(50)

    before = QApplication.topLevelWidgets()  # earlier tests' windows may linger (held: same wrappers)

    def window() -> MainWindow:  # run_gui's own
        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        return next(w for w in found if all(w is not old for old in before))

    def launch() -> None:  # inside run_gui's event loop: the window hides (as in the tray), then a 2nd launch
        window().hide()
        seen["second"] = _launch(data_dir)
        poll.start()

    def check() -> None:
        second = seen["second"]
        assert isinstance(second, subprocess.Popen)
        if second.poll() is not None and window().isVisible():  # handed over: the first showed itself
            poll.stop()
            seen["stderr"] = second.communicate()[1]
            seen["code"] = second.returncode
            window().close()

    poll.timeout.connect(check)
    QTimer.singleShot(0, launch)
    assert run_gui(data_dir, duration=120) == 0
    assert seen["code"] == 0 and "já está aberto para a pasta de dados" in str(seen["stderr"])
