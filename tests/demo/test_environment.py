from __future__ import annotations

import threading
from pathlib import Path

import keyring
import pytest

from app.capture.instance import AlreadyRunning
from app.capture.office import Office
from app.core.products import Product
from app.demo.background import BackgroundDemo
from app.demo.environment import MARKER, DemoEnvironment, DemoOptions, DemoRefused, prepare_demo_folder
from app.demo.memory_keyring import KeyringSwap, MemoryKeyring
from tests.conftest import wait_until


def test_a_previous_demo_is_reset_but_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    demo = tmp_path / "dados-demo"
    (demo / "certificates").mkdir(parents=True)
    (demo / "captura.sqlite3").write_bytes(b"old")
    (demo / "logs").mkdir()
    (demo / "logs" / "captura.log").write_text("antigo")
    prepare_demo_folder(demo)
    assert sorted(p.name for p in demo.iterdir()) == [MARKER, "logs"]
    assert (demo / "logs" / "captura.log").read_text() == "antigo"

    foreign = tmp_path / "projetos-demo"
    foreign.mkdir()
    (foreign / "planilha.xlsx").write_bytes(b"dados do usuario")
    with pytest.raises(DemoRefused, match="não são da demonstração"):
        prepare_demo_folder(foreign)
    assert (foreign / "planilha.xlsx").read_bytes() == b"dados do usuario"

    (foreign / MARKER).write_text("")  # once a demo folder, always reset (the user's file too)
    prepare_demo_folder(foreign)


def test_memory_keyring_swap_restores_the_previous_backend() -> None:
    before = keyring.get_keyring()
    swap = KeyringSwap()
    ring = swap.install()
    assert keyring.get_keyring() is ring and isinstance(ring, MemoryKeyring)
    keyring.set_password("CapturaDFe", "x:pfx-password", "segredo")
    assert ring.get_password("CapturaDFe", "x:pfx-password") == "segredo"
    ring.delete_password("CapturaDFe", "x:pfx-password")
    assert ring.get_password("CapturaDFe", "x:pfx-password") is None
    swap.restore()
    assert keyring.get_keyring() is before
    assert before.get_password("CapturaDFe", "x:pfx-password") is None


def test_background_demo_starts_off_the_calling_thread_and_owns_its_folder(tmp_path: Path) -> None:
    real_keyring = keyring.get_keyring()
    demo_dir = tmp_path / "dados-demo"
    env = DemoEnvironment(demo_dir, DemoOptions(speed=600))
    background = BackgroundDemo(env)
    starter: list[str] = []
    original = env.start

    def recording_start() -> None:
        starter.append(threading.current_thread().name)
        original()

    env.start = recording_start  # type: ignore[method-assign]
    background.start()
    try:
        assert env.started.wait(30), background.error
        assert starter == ["demo-start"]
        assert isinstance(keyring.get_keyring(), MemoryKeyring)
        assert env.service is not None and env.service.running
        wait_until(lambda: env.verdict().documents > 0, timeout=20)
        with pytest.raises(AlreadyRunning):
            DemoEnvironment(demo_dir).start()  # a second demo never resets a running one's folder
    finally:
        background.stop()
    assert keyring.get_keyring() is real_keyring
    assert real_keyring.get_password("CapturaDFe", "11222333000181:pfx-password") is None
    verdict = env.verdict()
    assert verdict.violations == [] and verdict.requests > 0

    # What the demo left: three companies with automatic Ciência after the minimum 5 minutes.
    with Office(demo_dir) as office:
        settings = [office.companies.get_settings(c.id, Product.NFE) for c in office.companies.list_companies()]
    assert len(settings) == 3
    assert all(s is not None and s.auto_ciencia and s.ciencia_wait_minutes == 5 for s in settings)
    assert b"PRIVATE KEY" not in b"".join(p.read_bytes() for p in demo_dir.rglob("*") if p.is_file())
