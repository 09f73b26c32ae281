"""What the distribution engine needs from a product: a Protocol each product package satisfies.

The engine (planning, the run loop, one unit of work per answer, the call lease, the locks) knows
no product; ``app.capture.nfe`` and ``app.capture.cte`` give it one of these. The answer policy
and the archive decision are pure functions of ``app.core``; the adapter names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from app.config.endpoints import Service
from app.core.cadence_an import AnswerPolicy
from app.core.ids import Cnpj
from app.core.products import Product
from app.fiscal.distribution import DistributedDocument
from app.store.records import CaptureSettings, Company, DocumentInput, EventInput, StoredDocument, StoredEvent
from app.store.unit import Unit

StoreInput = DocumentInput | EventInput
Stored = StoredDocument | StoredEvent


class DistributionAdapter(Protocol):
    """One SOAP distribution product (NF-e, CT-e) as the engine sees it."""

    @property
    def product(self) -> Product: ...

    @property
    def service(self) -> Service: ...

    @property
    def policy(self) -> AnswerPolicy: ...

    @property
    def job_type(self) -> str:
        """The run rows' job type ("nfe_distribution")."""
        ...

    def process(self, company: Cnpj, doc: DistributedDocument, settings: CaptureSettings | None) -> StoreInput:
        """One docZip in, one store input out; never raises for bad content."""
        ...

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        """Whether ``item`` counts in the "documents received" notice (the company's filters)."""
        ...

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> object:
        """Reads the lot needs before its transaction (kept out of the write lock)."""
        ...

    def within_lot(
        self,
        unit: Unit,
        company: Company,
        settings: CaptureSettings,
        items: Sequence[StoreInput],
        stored: Sequence[Stored],
        prepared: object,
        now: datetime,
    ) -> None:
        """The product's own writes of a lot, in the lot's transaction (Ciências, cancellations)."""
        ...

    def within_recovery(
        self, unit: Unit, company: Company, items: Sequence[StoreInput], stored: Sequence[Stored]
    ) -> None:
        """The product's own writes for documents a point query fetched, in their transaction."""
        ...
