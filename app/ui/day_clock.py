"""The day on the desk's clock: a timer that fires at its next midnight (Brasília) and says so.

The window's period follows today unless the clerk set the dates; a window left open (or in the
tray) overnight lists the new day's documents without a key press. The timer waits the real time
until the clock's next midnight (a sped-up demo clock gets there sooner), never longer than
``max_wait_ms``: a clock that jumps (a laptop resuming from sleep, a test's fake clock) is seen
within that much.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.clock import to_brasilia
from app.core.errors import CapturaError
from app.desk.days import brasilia_midnight

log = logging.getLogger(__name__)
MAX_WAIT_MS = 60_000
MIN_WAIT_MS = 50


class DayClock(QObject):
    """``turned(date)`` once per new day of ``now`` (Brasília), from the GUI thread."""

    turned = Signal(object)

    def __init__(
        self,
        now: Callable[[], datetime],
        factor: Callable[[], float] = lambda: 1.0,
        parent: QObject | None = None,
        *,
        max_wait_ms: int = MAX_WAIT_MS,
    ) -> None:
        super().__init__(parent)
        self._now = now
        self._factor = factor
        self.max_wait_ms = max_wait_ms
        self.day = self.today()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._check)

    def today(self) -> date:
        return to_brasilia(self._now()).date()

    def start(self) -> None:
        self.day = self.today()
        self._schedule()

    def stop(self) -> None:
        self._timer.stop()

    def wait_ms(self) -> int:
        """Real milliseconds until the clock's next midnight (bounded)."""
        now = self._now()
        midnight = brasilia_midnight(to_brasilia(now).date() + timedelta(days=1))
        real = (midnight - now).total_seconds() / max(self._factor(), 1e-9)
        return int(min(max(real * 1000 + 1, MIN_WAIT_MS), self.max_wait_ms))

    def _schedule(self) -> None:
        self._timer.start(self.wait_ms())

    def _check(self) -> None:
        try:
            today = self.today()
        except CapturaError:  # the desk closed under a window still open: no day to follow
            log.info("Relógio do dia parado: a pasta de dados foi fechada")
            return
        if today != self.day:
            self.day = today
            self.turned.emit(today)
        self._schedule()
