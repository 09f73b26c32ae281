"""The distribution engine shared by every SOAP product: it imports no product.

Product packages (``app.capture.nfe``, ``app.capture.cte``) give it a ``DistributionAdapter``.
"""

from app.capture.engine.adapter import DistributionAdapter, Stored, StoreInput
from app.capture.engine.capture import Dispatcher, DistributionCapture, NoDispatch
from app.capture.engine.distribution import (
    MAX_LOTS_PER_RUN,
    DistributionEngine,
    RunResult,
    may_have_reached_service,
)
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.points import PointQueries

__all__ = [
    "MAX_LOTS_PER_RUN",
    "CompanyLocks",
    "Dispatcher",
    "DistributionAdapter",
    "DistributionCapture",
    "DistributionEngine",
    "NoDispatch",
    "PointQueries",
    "RunResult",
    "StoreInput",
    "Stored",
    "may_have_reached_service",
]
