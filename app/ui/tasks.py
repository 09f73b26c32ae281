"""Work off the GUI thread: a call runs on a pool thread, its result comes back as a signal.

The GUI thread never waits on the network or the disk: every desk call goes through
:class:`Tasks`. A result arrives on the GUI thread through a queued signal; ``tag`` lets a caller
drop the answer of a request that a newer one replaced (a filter typed further).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.core.errors import CapturaError

log = logging.getLogger(__name__)


class _Bridge(QObject):
    finished = Signal(object, object)  # (callback, result)
    failed = Signal(object, object)  # (callback, exception)


class _Call(QRunnable):
    def __init__(
        self,
        bridge: _Bridge,
        work: Callable[[], Any],
        done: Callable[[Any], None] | None,
        error: Callable[[BaseException], None] | None,
    ) -> None:
        super().__init__()
        self._bridge, self._work, self._done, self._error = bridge, work, done, error
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result = self._work()
        except CapturaError as exc:  # a refusal the user reads (wrong password...): no traceback
            log.info("Tarefa recusada: %s", exc.message)
            self._bridge.failed.emit(self._error, exc)
        except Exception as exc:  # reported to the GUI thread, never lost in a pool thread
            log.exception("Falha numa tarefa em segundo plano")
            self._bridge.failed.emit(self._error, exc)
        else:
            self._bridge.finished.emit(self._done, result)


class Tasks(QObject):
    """A small pool (the window's reads and requests); ``pending`` counts calls not yet answered."""

    def __init__(self, parent: QObject | None = None, threads: int = 3) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._bridge = _Bridge(self)
        self._bridge.finished.connect(self._finished)
        self._bridge.failed.connect(self._failed)
        self.pending = 0
        self._closed = False
        self.on_error: Callable[[BaseException], None] | None = None

    def run(
        self,
        work: Callable[[], Any],
        done: Callable[[Any], None] | None = None,
        error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.pending += 1
        self._pool.start(_Call(self._bridge, work, done, error))

    def _finished(self, done: Callable[[Any], None] | None, result: Any) -> None:
        self.pending -= 1
        if done is not None and not self._closed:
            done(result)

    def _failed(self, error: Callable[[BaseException], None] | None, exc: BaseException) -> None:
        self.pending -= 1
        if self._closed:
            return
        handler = error or self.on_error
        if handler is not None:
            handler(exc)

    def wait(self, msecs: int = 30_000) -> bool:
        """Let calls in flight end (closing the window); True when none is left."""
        return bool(self._pool.waitForDone(msecs))

    def close(self, msecs: int = 30_000) -> bool:
        """``wait``, then deliver no more answers: what is still queued would reach a closed desk
        (the session ending closes it while the event loop still runs)."""
        done = self.wait(msecs)
        self._closed = True
        return done
