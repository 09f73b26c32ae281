"""One capture service per data folder: an OS file lock on ``<data_dir>/captura.lock``.

The lock is the operating system's (``flock`` on Unix, ``LockFileEx`` on Windows) held on an open
file: it dies with the process, so a crash or a kill never leaves a stale lock behind. The file
itself stays on disk; only the OS lock on it matters.
"""

from __future__ import annotations

import contextlib
import os
import socket
from datetime import datetime
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from app.core.clock import BRASILIA
from app.core.errors import CapturaError

LOCK_NAME = "captura.lock"


OWNER_NAME = "captura.lock.owner"


class AlreadyRunning(CapturaError):
    """Another process already captures in this data folder; ``holder`` says who, when known."""

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class DataFolderLock:
    """Exclusive, non-blocking ownership of a data folder for the capture service.

    ``acquire()`` raises :class:`AlreadyRunning` when another process (or another lock object in
    this one) holds it; ``release()`` is idempotent. Usable as a context manager.
    """

    def __init__(self, data_dir: Path, owner: str = "Captura DF-e") -> None:
        """``owner`` names the holder for another instance (beside the lock, in ``OWNER_NAME``:
        the OS lock itself says only that someone holds it)."""
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_NAME
        self.owner = owner
        # No soft (marker-file) fallback: a marker would survive a crash and block the next start.
        self._lock = FileLock(self.path, timeout=0, thread_local=False, fallback_to_soft=False)

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> None:
        if self._lock.is_locked:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            holder = self.holder()
            who = f" ({holder})" if holder else ""
            raise AlreadyRunning(
                f"Outra instância do Captura DF-e já está capturando nesta pasta de dados{who} "
                f"({self.data_dir}). Feche a outra janela ou o outro processo, ou use outra pasta de dados.",
                holder,
            ) from None
        except OSError as error:
            raise CapturaError(
                f"Não foi possível reservar a pasta de dados {self.data_dir} para a captura: {error}."
            ) from error
        since = datetime.now(BRASILIA).strftime("%d/%m/%Y %H:%M")  # Brasília, as every other time shown
        try:
            (self.data_dir / OWNER_NAME).write_text(
                f"{self.owner}, PID {os.getpid()} em {socket.gethostname()}, desde {since}", encoding="utf-8"
            )
        except OSError:  # a courtesy to the other instance, never a reason not to capture
            pass

    def holder(self) -> str | None:
        """Who holds the folder, as its holder wrote it (None when unknown)."""
        try:
            return (self.data_dir / OWNER_NAME).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def release(self) -> None:
        if self._lock.is_locked:
            with contextlib.suppress(OSError):
                (self.data_dir / OWNER_NAME).unlink(missing_ok=True)
            self._lock.release(force=True)

    def __enter__(self) -> DataFolderLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
