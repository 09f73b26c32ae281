"""Test-wide setup: offscreen Qt, every path and the keyring pointed into tmp folders."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import pytest
from hypothesis import settings as hypothesis_settings

from tests.support.engines import engine_name, migrated_postgres, office_database  # noqa: F401  (fixtures)
from tests.support.postgres import postgres_cluster, postgres_url  # noqa: F401  (fixtures)

# No example database: nothing is written into the work tree, and every run is reproducible
# from its seed rather than from a cache a clean checkout does not have.
hypothesis_settings.register_profile("captura", database=None, deadline=None)
hypothesis_settings.load_profile("captura")

from app.config.runtime import qt_font_dir  # noqa: E402 - after the profile, before any Qt import

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
qt_font_dir(os.environ)  # Windows: the offscreen plugin's fonts (else a warning, which fails Qt tests)

FIXTURES = Path(__file__).parent / "fixtures"
# Folders of images a test wrote for a person to look at (screens, PDF pages): named at the end.
_ARTIFACTS: dict[str, Path] = {}


def show_artifacts(label: str, folder: Path) -> Path:
    """Name ``folder`` in the test run's summary under ``label`` ("Telas da janela")."""
    _ARTIFACTS[label] = folder
    return folder


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _ARTIFACTS:
        terminalreporter.section("imagens para conferir")
        for label, folder in sorted(_ARTIFACTS.items()):
            terminalreporter.write_line(f"{label}: {folder}")


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Nothing a test does reaches the user's data folder or the real OS keyring."""
    from tests.support.test_keyring import TestKeyring

    home = tmp_path_factory.mktemp("home")
    data_dir = home / "data"
    monkeypatch.setenv("CAPTURA_DATA_DIR", str(data_dir))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    # Windows: platformdirs asks the shell (SHGetKnownFolderPath), not the environment, so the
    # per-user folders are redirected through its override variables too; APPDATA and
    # LOCALAPPDATA for anything (a child process) that reads them.
    for name, folder in (("APPDATA", "appdata-roaming"), ("LOCAL_APPDATA", "appdata-local")):
        monkeypatch.setenv(f"WIN_PD_OVERRIDE_{name}", str(home / folder))
        monkeypatch.setenv(name.replace("_", ""), str(home / folder))
    ring = TestKeyring()
    ring.file_path = str(home / "keyring.cfg")  # type: ignore[misc]
    previous = keyring.get_keyring()
    keyring.set_keyring(ring)
    try:
        yield data_dir
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def data_dir(_isolated_environment: Path) -> Path:
    return _isolated_environment


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.01) -> None:
    """Wait on a condition (never a bare sleep): fails the test when ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        event.wait(interval)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
