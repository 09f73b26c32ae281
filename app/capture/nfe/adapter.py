"""NF-e Inbound on the distribution engine: what only NF-e does with a lot (rule book §4.3-4.5).

Each document is read by the NF-e reader; a lot's new summaries (resNFe) queue the automatic
Ciência when the company enabled it, and its notes cancelled by an event (in this lot or stored
before) are marked so, all in the lot's own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.capture.context import CaptureContext
from app.capture.engine.adapter import LotAnswer, RunSoFar, Stored, StoreInput
from app.capture.engine.soap import OPERATION, soap_lot
from app.capture.nfe.processing import is_registered_cancellation, process_document
from app.config.endpoints import Service
from app.core.cadence import CaptureState, rules_for
from app.core.cadence_an import AnswerPolicy
from app.core.cadence_nfe import apply_nfe_distribution
from app.core.event_types import CANCELLATIONS
from app.core.ids import Cnpj
from app.core.manifestation import CIENCIA, ciencia_due_at
from app.core.products import Product
from app.fiscal.distribution import DistributedDocument
from app.store.records import CaptureSettings, Company, DocumentKind, StoredDocument
from app.store.unit import Unit

PRODUCT = Product.NFE
SERVICE = Service.NFE_DISTRIBUICAO
_NOTE_KINDS = (DocumentKind.RES_NFE, DocumentKind.NFE_PROC)


@dataclass(frozen=True, slots=True)
class NfeAdapter:
    """Satisfies ``app.capture.engine.soap.SoapAdapter`` for NF-e."""

    ctx: CaptureContext
    product: Product = PRODUCT
    service: Service = SERVICE
    policy: AnswerPolicy = apply_nfe_distribution
    job_type: str = "nfe_distribution"
    operation: str = OPERATION

    def query(self, company: Company, settings: CaptureSettings, state: CaptureState, run: RunSoFar) -> LotAnswer:
        return soap_lot(self.ctx, self, rules_for(self.product), company, settings, state)

    def process(self, company: Cnpj, doc: DistributedDocument, settings: CaptureSettings | None) -> StoreInput:
        return process_document(company, doc)

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        return not getattr(item, "parse_error", None)

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> set[str]:
        """Keys of this lot's notes that are, or become, cancelled: by an event in this lot or by
        one stored before (one read for the lot, only when it has notes)."""
        cancelled = {item.access_key for item in items if is_registered_cancellation(item) and item.access_key}
        notes = {item.access_key for item in items if item.kind in _NOTE_KINDS and item.access_key}
        if notes:
            cancelled |= self.ctx.events.keys_with_event(company.id, PRODUCT, notes, CANCELLATIONS)
        return cancelled

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
        if settings.auto_ciencia:
            _queue_ciencias(unit, company, settings, items, stored, now)
        if isinstance(prepared, set) and prepared:
            unit.mark_cancelled(company.id, PRODUCT, prepared)

    def within_recovery(
        self, unit: Unit, company: Company, items: Sequence[StoreInput], stored: Sequence[Stored]
    ) -> None:
        return None  # a recovered summary is not a new arrival: no automatic Ciência from here


def _queue_ciencias(
    unit: Unit,
    company: Company,
    settings: CaptureSettings,
    items: Sequence[StoreInput],
    stored: Sequence[Stored],
    now: datetime,
) -> None:
    """Automatic Ciência for every summary seen for the first time."""
    for item, outcome in zip(items, stored, strict=True):
        if (
            item.access_key is not None
            and item.kind is DocumentKind.RES_NFE
            and isinstance(outcome, StoredDocument)
            and outcome.created
        ):
            unit.request_manifestation(
                company.id,
                PRODUCT,
                item.access_key,
                CIENCIA,
                not_before=ciencia_due_at(now, settings.ciencia_wait_minutes),
                automatic=True,
            )
