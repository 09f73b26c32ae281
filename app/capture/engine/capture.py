"""One product's capture as the service schedules it: its distribution, its dispatches, its daily
check.

When each runs is the service's job table (``app.capture.jobs``), one for the scheduler (real
clock) and the simulation (virtual clock); this bundle only holds the parts the jobs call.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from app.capture.context import CaptureContext
from app.capture.engine.adapter import DistributionAdapter
from app.capture.engine.distribution import DistributionEngine
from app.capture.engine.locks import CompanyLocks
from app.core.products import Product


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

    @property
    def product(self) -> Product:
        return self.distribution.product
