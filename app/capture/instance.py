"""One capture service per data folder: an OS file lock on ``<data_dir>/captura.lock``.

The lock is the operating system's (``flock`` on Unix, ``LockFileEx`` on Windows) held on an open
file: it dies with the process, so a crash or a kill never leaves a stale lock behind. The file
itself stays on disk; only the OS lock on it matters.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from app.core.errors import CapturaError

LOCK_NAME = "captura.lock"


class AlreadyRunning(CapturaError):
    """Another process already captures in this data folder."""


class DataFolderLock:
    """Exclusive, non-blocking ownership of a data folder for the capture service.

    ``acquire()`` raises :class:`AlreadyRunning` when another process (or another lock object in
    this one) holds it; ``release()`` is idempotent. Usable as a context manager.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_NAME
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
            raise AlreadyRunning(
                "Outra instância do Captura DF-e já está capturando nesta pasta de dados "
                f"({self.data_dir}). Feche a outra janela ou o outro processo, ou use outra pasta de dados."
            ) from None
        except OSError as error:
            raise CapturaError(
                f"Não foi possível reservar a pasta de dados {self.data_dir} para a captura: {error}."
            ) from error

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release(force=True)

    def __enter__(self) -> DataFolderLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
