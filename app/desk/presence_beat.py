"""The heartbeat of an app that runs no capture node: a read-only window (another process holds
its data folder, e.g. ``capture --daemon`` on the same folder) is connected to the office too.

A node beats with its lease renewals (``app.capture.node``); a desk without one starts this
thread instead, so the Painel's "Estações conectadas" lists every window open on the office
database. Same table, same times (``app.store.presence``): a row of its own beside the folder's
(``alongside``), refreshed every ``renew_every``, removed by a clean stop, expired after ``ttl``
when the process is killed.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from app.capture.node import LeaseTiming
from app.core.errors import CapturaError
from app.store.db import Database
from app.store.lease import NodeIdentity
from app.store.presence import Presence

log = logging.getLogger(__name__)


class PresenceBeat:
    """Beats for ``identity`` on ``db`` from ``start`` until ``stop`` (a daemon thread)."""

    def __init__(self, db: Database, identity: NodeIdentity, timing: LeaseTiming | None = None) -> None:
        self.presence = Presence(db)
        self.identity = identity
        self.timing = timing or LeaseTiming()
        self._clock = db.clock
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> PresenceBeat:
        self.beat()  # listed as soon as the window is open
        self._thread = threading.Thread(target=self._loop, name="captura-presenca", daemon=True)
        self._thread.start()
        return self

    def beat(self) -> None:
        try:
            self.presence.beat(self.identity, self._clock.now(), self.timing.ttl, alongside=True)
        except CapturaError as error:  # the server unreachable: the next beat tries again
            log.warning("Presença da estação não registrada: %s", error)

    def _loop(self) -> None:
        interval = self.timing.renew_every.total_seconds() / self._clock.factor
        while not self._stopping.wait(interval):
            self.beat()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
        with contextlib.suppress(CapturaError):  # unreachable server: the row expires
            self.presence.leave(self.identity, alongside=True)
