"""What the capture service needs from each product's engines, and the registry of products.

Structural protocols: ``NfeCapture`` and ``CteCapture`` satisfy ``ProductCapture`` without
inheriting from it, and so does ``NfseCapture``. A product without manifestations or point
queries gives objects whose ``dispatch`` returns 0 and whose ``next_due_at`` returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from app.capture.context import CaptureContext
from app.capture.engine.distribution import RunResult
from app.core.cadence import CadenceRules
from app.core.errors import CapturaError
from app.core.products import Product
from app.store.records import Company


class DistributionEngine(Protocol):
    """The routine distribution of one product: plan, decide, run one company."""

    rules: CadenceRules
    # Heartbeat after every lot (company id); False ends the run after that lot.
    lot_done: Callable[[int], bool] | None

    def due(self, now: datetime) -> list[Company]: ...

    def run_company(self, company_id: int, *, trigger: str = ...) -> RunResult: ...

    def next_due_at(self, now: datetime) -> datetime | None: ...

    def planned_next(self, after: datetime | None = None) -> datetime | None: ...

    def replan(self, company_id: int | None = None) -> None: ...

    def recover_lost_answers(self) -> int: ...

    def release_lease(self) -> None: ...

    def store_unstored(self) -> int: ...


class Dispatcher(Protocol):
    """Asynchronous requests sent when due (manifestations)."""

    def dispatch(self, limit: int = ..., *, company_id: int | None = None) -> int: ...

    def next_due_at(self) -> datetime | None: ...


class PointQueries(Dispatcher, Protocol):
    """Gap recoveries (dispatched when due) and the daily check that queues them."""

    def daily_gap_check(self) -> int: ...


class ProductCapture(Protocol):
    """One product's capture: what the service schedules."""

    @property
    def product(self) -> Product: ...

    @property
    def ctx(self) -> CaptureContext: ...

    @property
    def distribution(self) -> DistributionEngine: ...

    @property
    def manifestation(self) -> Dispatcher: ...

    @property
    def points(self) -> PointQueries: ...


class ProductUnavailable(CapturaError):
    """The service was asked for a product whose engine does not exist yet."""


CaptureFactory = Callable[[CaptureContext], ProductCapture]


def _nfe(ctx: CaptureContext) -> ProductCapture:
    from app.capture.nfe import NfeCapture  # the product packages import these protocols

    return NfeCapture(ctx)


def _cte(ctx: CaptureContext) -> ProductCapture:
    from app.capture.cte import CteCapture

    return CteCapture(ctx)


def _nfse(ctx: CaptureContext) -> ProductCapture:
    from app.capture.nfse import NfseCapture

    return NfseCapture(ctx)


# The products the service can capture, each built from the context alone.
REGISTRY: dict[Product, CaptureFactory] = {Product.NFE: _nfe, Product.CTE: _cte, Product.NFSE: _nfse}


def build_capture(ctx: CaptureContext, product: Product) -> ProductCapture:
    """The engine of ``product`` over ``ctx``."""
    factory = REGISTRY.get(product)
    if factory is None:
        raise ProductUnavailable(f"A captura de {product.label} ainda não está disponível nesta versão.")
    return factory(ctx)
