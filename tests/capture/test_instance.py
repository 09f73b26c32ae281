"""One capture service per data folder: the OS lock, a second holder refused, no stale lock after a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.service import CaptureService
from tests.support.fleet import fleet

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from pathlib import Path
from app.capture.instance import DataFolderLock
lock = DataFolderLock(Path(sys.argv[1]))
lock.acquire()
print("locked", flush=True)
sys.stdin.read()  # hold until killed or stdin closes
"""


@contextmanager
def _holder(data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """A child process holding ``data_dir``'s lock until its stdin closes or it is killed."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        try:
            assert child.stdout.readline().strip() == "locked"  # returns once the child holds the lock
            yield child
        finally:
            if child.poll() is None:
                child.kill()
            child.wait(timeout=10)


def test_a_second_lock_on_the_same_folder_is_refused_until_released(tmp_path: Path) -> None:
    first = DataFolderLock(tmp_path)
    first.acquire()
    second = DataFolderLock(tmp_path)
    with pytest.raises(AlreadyRunning, match="Outra instância do Captura DF-e já está capturando") as refused:
        second.acquire()
    assert str(tmp_path) in refused.value.message
    assert not second.held
    first.release()
    first.release()  # idempotent
    with second:
        assert second.held
    assert not second.held


def test_another_process_holding_the_folder_refuses_us(tmp_path: Path) -> None:
    with _holder(tmp_path) as child:
        with pytest.raises(AlreadyRunning):
            DataFolderLock(tmp_path).acquire()
        assert child.stdin is not None
        child.stdin.close()
        assert child.wait(timeout=10) == 0
    with DataFolderLock(tmp_path) as lock:  # a clean exit released it
        assert lock.held


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX; TerminateProcess behaves the same")
def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    with _holder(tmp_path) as child:
        with pytest.raises(AlreadyRunning):
            DataFolderLock(tmp_path).acquire()
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    assert (tmp_path / "captura.lock").exists()  # the file stays; the OS lock died with the process
    with DataFolderLock(tmp_path) as lock:
        assert lock.held


def test_the_service_takes_the_folder_on_start_and_gives_it_back_on_stop(tmp_path: Path) -> None:
    with fleet(tmp_path, 1) as f:
        data_dir = f.office.data_dir
        service = CaptureService(f.ctx, data_lock=DataFolderLock(data_dir))
        with _holder(data_dir):
            with pytest.raises(AlreadyRunning):
                service.start()
            assert not service.running
        service.start()
        try:
            with pytest.raises(AlreadyRunning):
                DataFolderLock(data_dir).acquire()
        finally:
            assert service.stop(timeout=5)
        with DataFolderLock(data_dir) as lock:
            assert lock.held


def test_the_refusal_says_who_holds_the_folder_and_a_release_forgets_it(tmp_path: Path) -> None:
    from app.capture.instance import OWNER_NAME

    first = DataFolderLock(tmp_path, owner="linha de comando (capture --daemon)")
    first.acquire()
    try:
        with pytest.raises(AlreadyRunning) as refused:
            DataFolderLock(tmp_path).acquire()
        assert refused.value.holder is not None and "capture --daemon" in refused.value.holder
        assert "capture --daemon" in refused.value.message and "PID" in refused.value.message
    finally:
        first.release()
    assert not (tmp_path / OWNER_NAME).exists()
    second = DataFolderLock(tmp_path)
    second.acquire()  # free again
    second.release()


def test_the_holder_says_since_when_in_brasilia_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A computer set to UTC (a server, a misconfigured laptop) still tells Brasília time, as the
    rest of the program does."""
    from datetime import datetime

    from app.core.clock import BRASILIA

    monkeypatch.setenv("TZ", "UTC")
    before = datetime.now(BRASILIA).strftime("%d/%m/%Y %H:%M")
    with DataFolderLock(tmp_path, owner="Janela") as lock:
        holder = lock.holder() or ""
    after = datetime.now(BRASILIA).strftime("%d/%m/%Y %H:%M")
    assert holder.startswith("Janela, PID ")
    assert holder.endswith((f"desde {before}", f"desde {after}"))
