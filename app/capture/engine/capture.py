"""One SOAP distribution product as the service schedules it: distribution, its dispatches, the
daily check.

``run_due`` does everything that is due now and says when something is next due; the capture
service calls it from its scheduler (real clock) or from a simulation loop (virtual clock), so the
same code runs both ways.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from app.capture.context import CaptureContext
from app.capture.engine.adapter import DistributionAdapter
from app.capture.engine.distribution import DistributionEngine
from app.capture.engine.locks import CompanyLocks
from app.core.products import Product
from app.core.recovery import DISPATCH_INTERVAL, next_daily_run


class Dispatcher(Protocol):
    """Asynchronous requests sent when due (manifestations)."""

    def dispatch(self, limit: int = ..., *, company_id: int | None = None) -> int: ...

    def next_due_at(self) -> datetime | None: ...


class GapWork(Dispatcher, Protocol):
    """A product's gap recovery: dispatched when due, and the daily check that finds the gaps
    (SOAP point queries in ``app.capture.engine.points``; NFS-e restarts its distribution)."""

    def daily_gap_check(self) -> int: ...


class NoDispatch:
    """A product without asynchronous requests (CT-e has no recipient manifestation)."""

    def dispatch(self, limit: int = 100, *, company_id: int | None = None) -> int:
        return 0

    def next_due_at(self) -> datetime | None:
        return None


class DistributionCapture:
    """A product's distribution, manifestation dispatcher and point queries over one context."""

    def __init__(
        self,
        ctx: CaptureContext,
        adapter: DistributionAdapter,
        *,
        points: GapWork,
        manifestation: Dispatcher | None = None,
        locks: CompanyLocks | None = None,
    ) -> None:
        self.ctx = ctx
        self.distribution = DistributionEngine(ctx, adapter, locks)
        self.manifestation: Dispatcher = manifestation if manifestation is not None else NoDispatch()
        self.points = points
        self._next_dispatch: datetime | None = None
        self._next_daily: datetime | None = None

    @property
    def product(self) -> Product:
        return self.distribution.product

    def run_due(self) -> datetime | None:
        """Run what is due now (in order: distribution, manifestations, recoveries, daily check)."""
        now = self.ctx.clock.now()
        for company in self.distribution.due(now):
            self.distribution.run_company(company.id)
        self.manifestation.dispatch()
        now = self.ctx.clock.now()
        if self._next_daily is None:
            self._next_daily = next_daily_run(now)
        elif now >= self._next_daily:
            self.points.daily_gap_check()
            self._next_daily = next_daily_run(now)
        if self._next_dispatch is None or now >= self._next_dispatch:
            self.points.dispatch()
            self._next_dispatch = now + DISPATCH_INTERVAL
        return self.next_due_at()

    def next_due_at(self) -> datetime | None:
        now = self.ctx.clock.now()
        candidates = [self.distribution.next_due_at(now), self.manifestation.next_due_at(), self._next_daily]
        recovery = self.points.next_due_at()
        if recovery is not None and self._next_dispatch is not None:
            # Recoveries are dispatched on the 5-minute tick, not the instant they become due.
            candidates.append(max(recovery, self._next_dispatch))
        return min((c for c in candidates if c is not None), default=None)
