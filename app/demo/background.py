"""The demo behind the window: started on a worker thread, never on the GUI thread."""

from __future__ import annotations

import logging
import threading

from app.demo.environment import DemoEnvironment

log = logging.getLogger(__name__)


class BackgroundDemo:
    """Starts a :class:`DemoEnvironment` on its own thread; :meth:`stop` waits for it, then stops it."""

    def __init__(self, env: DemoEnvironment) -> None:
        self.env = env
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="demo-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.env.start()
        except Exception as error:  # shown in the log; the window stays usable
            self.error = error
            log.exception("A demonstração não pôde começar")

    def stop(self, timeout: float = 30.0) -> None:
        """Idempotent; safe to call while the start is still in progress."""
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.env.stop()
