"""NF-e Inbound as one product: distribution, manifestation, point queries and the daily check.

``run_due`` does everything that is due now and says when something is next due; the capture
service calls it from its scheduler (real clock) or from a simulation loop (virtual clock), so the
same code runs both ways.
"""

from __future__ import annotations

from datetime import datetime

from app.capture.context import CaptureContext
from app.capture.nfe_engine import PRODUCT, CompanyLocks, NfeDistributionEngine, RunResult
from app.capture.nfe_manifestation import NfeManifestationService
from app.capture.nfe_recovery import NfePointQueries
from app.core.recovery import DISPATCH_INTERVAL, next_daily_run


class NfeCapture:
    """NF-e Inbound: satisfies ``app.capture.service.ProductCapture``."""

    product = PRODUCT

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks | None = None) -> None:
        self.ctx = ctx
        self.distribution = NfeDistributionEngine(ctx, locks)
        self.manifestation = NfeManifestationService(ctx)
        self.points = NfePointQueries(ctx, self.distribution.locks)
        self._next_dispatch: datetime | None = None
        self._next_daily: datetime | None = None

    def run_due(self) -> datetime | None:
        """Run what is due now (in order: distribution, manifestations, recoveries, daily check)."""
        now = self.ctx.clock.now()
        results: list[RunResult] = []
        for company in self.distribution.due(now):
            results.append(self.distribution.run_company(company.id))
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
