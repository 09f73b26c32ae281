"""The distribution engine shared by every product: it imports no product.

Product packages (``app.capture.nfe``, ``app.capture.cte``, ``app.capture.nfse``) give it a
``DistributionAdapter``; the SOAP ones answer through ``app.capture.engine.soap``.
"""

from app.capture.engine.adapter import DistributionAdapter, LotAnswer, RunSoFar, Stored, StoreInput
from app.capture.engine.capture import Dispatcher, DistributionCapture, NoDispatch
from app.capture.engine.distribution import (
    MAX_LOTS_PER_RUN,
    DistributionEngine,
    RunResult,
    may_have_reached_service,
)
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.points import PointQueries
from app.capture.engine.soap import SoapAdapter, soap_lot

__all__ = [
    "MAX_LOTS_PER_RUN",
    "CompanyLocks",
    "Dispatcher",
    "DistributionAdapter",
    "DistributionCapture",
    "DistributionEngine",
    "LotAnswer",
    "NoDispatch",
    "PointQueries",
    "RunResult",
    "RunSoFar",
    "SoapAdapter",
    "StoreInput",
    "Stored",
    "may_have_reached_service",
    "soap_lot",
]
