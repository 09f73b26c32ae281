"""Compatibility: the NF-e distribution engine's old home; the engine is ``app.capture.engine``."""

from __future__ import annotations

from app.capture.context import CaptureContext
from app.capture.engine.distribution import (
    MAX_LOTS_PER_RUN,
    RECHECK_DISABLED,
    DistributionEngine,
    RunResult,
    may_have_reached_service,
)
from app.capture.engine.lease import LEASE_EXTENSION
from app.capture.engine.locks import CompanyLocks
from app.capture.nfe.adapter import PRODUCT, SERVICE, NfeAdapter

__all__ = [
    "LEASE_EXTENSION",
    "MAX_LOTS_PER_RUN",
    "PRODUCT",
    "RECHECK_DISABLED",
    "SERVICE",
    "CompanyLocks",
    "NfeDistributionEngine",
    "RunResult",
    "may_have_reached_service",
]


class NfeDistributionEngine(DistributionEngine):
    """The engine with the NF-e adapter."""

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks | None = None) -> None:
        super().__init__(ctx, NfeAdapter(ctx), locks)
