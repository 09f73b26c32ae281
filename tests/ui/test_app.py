from __future__ import annotations

import threading
from pathlib import Path

import keyring
from pytestqt.qtbot import QtBot

from app.capture.office import Office
from app.demo.environment import DemoOptions
from app.ui.app import run_gui


def test_demo_window_runs_the_capture_in_the_background_and_stops_it_on_close(qtbot: QtBot, tmp_path: Path) -> None:
    real_keyring = keyring.get_keyring()
    demo_dir = tmp_path / "dados-demo"
    assert run_gui(demo_dir, demo=True, demo_options=DemoOptions(speed=600), duration=4.0) == 0
    # Closed: the service, its pools and the sandbox are gone, the keyring is the real one again.
    assert keyring.get_keyring() is real_keyring
    assert not [t.name for t in threading.enumerate() if t.name.startswith(("captura-", "demo-"))]
    with Office(demo_dir) as office:
        assert len(office.companies.list_companies()) == 3
