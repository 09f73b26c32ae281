"""What the distribution engine needs from a product: a Protocol each product package satisfies.

The engine (planning, the run loop, one transaction per answer, the call lease, the locks) knows
no product and no protocol: it asks the adapter for one lot (``query``) and gets back a
:class:`LotAnswer`: the state the answer leaves (decided by the product's pure answer policy in
``app.core``), the store inputs it brought and the facts of the call for the log. SOAP products
(NF-e, CT-e) answer through :mod:`app.capture.engine.soap`, the ADN's REST product (NFS-e) through
its own client; the engine cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.config.endpoints import Service
from app.core.cadence import CaptureState, Transition
from app.core.products import Product
from app.store.records import (
    CallOutcome,
    CaptureSettings,
    Company,
    DocumentInput,
    EventInput,
    StoredDocument,
    StoredEvent,
)
from app.store.unit import Unit

StoreInput = DocumentInput | EventInput
Stored = StoredDocument | StoredEvent


@dataclass(frozen=True, slots=True)
class RunSoFar:
    """What the company's run did before this lot (the ADN's rules count lots and captures)."""

    lots: int = 0
    documents: int = 0


@dataclass(frozen=True, slots=True)
class StoredLot:
    """A lot as the shared store just wrote it, inside its transaction: what the product's own
    writes (Ciências, cancellations, links, details) read. ``prepared`` is what the product's
    ``prepare_lot`` read before the transaction (None for a point query's documents);
    ``settings`` is None only for a company without settings for the product."""

    unit: Unit
    company: Company
    settings: CaptureSettings | None
    items: Sequence[StoreInput]
    stored: Sequence[Stored]
    now: datetime
    prepared: object = None


@dataclass(frozen=True, slots=True)
class LotAnswer:
    """One query's outcome, ready for the engine's single transaction.

    ``outcome`` None means no call went out (a circuit breaker held it): nothing is logged.
    ``corrupt`` lists NSUs whose payload did not decode, to be fetched again by point query
    when the product has one. ``exchange`` is the (request, response) pair to archive, if any.
    """

    transition: Transition
    outcome: CallOutcome | None
    items: Sequence[StoreInput] = ()
    code: str | None = None  # cStat, or the ADN's status / first error code
    http_status: int | None = None
    error: str | None = None
    exchange: tuple[bytes, bytes] | None = None
    corrupt: tuple[int, ...] = ()


class DistributionAdapter(Protocol):
    """One distribution product as the engine sees it."""

    @property
    def product(self) -> Product: ...

    @property
    def service(self) -> Service:
        """The service its calls are logged (and archived) under."""
        ...

    @property
    def job_type(self) -> str:
        """The run rows' job type ("nfe_distribution")."""
        ...

    @property
    def operation(self) -> str:
        """The call log's operation name ("distNSU", "GET /DFe")."""
        ...

    def query(self, company: Company, settings: CaptureSettings, state: CaptureState, run: RunSoFar) -> LotAnswer:
        """Ask the service for the lot after ``state``'s cursor; never raises for a failed call."""
        ...

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        """Whether ``item`` counts in the "documents received" notice (the company's filters)."""
        ...

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> object:
        """Reads the lot needs before its transaction (kept out of the write lock)."""
        ...

    def within_lot(self, lot: StoredLot) -> None:
        """The product's own writes of a lot, in the lot's transaction (Ciências, cancellations)."""
        ...

    def within_recovery(self, lot: StoredLot) -> None:
        """The product's own writes for documents a point query fetched, in their transaction."""
        ...
