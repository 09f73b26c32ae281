"""NF-e Inbound on the distribution engine: what only NF-e does with a lot (rule book §4.3-4.5).

Each document is read by the NF-e reader; a lot's new summaries (resNFe) queue the automatic
Ciência when the company enabled it, and its notes cancelled by an event (in this lot or stored
before) are marked so, all in the lot's own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.capture.engine.adapter import StoredLot, StoreInput
from app.capture.engine.soap import Reader, SoapProduct
from app.capture.nfe.processing import is_registered_cancellation, process_document
from app.config.endpoints import Service
from app.core.event_types import CANCELLATIONS
from app.core.manifestation import CIENCIA, ciencia_due_at
from app.core.products import Product
from app.store.records import Company, DocumentKind, StoredDocument

PRODUCT = Product.NFE
SERVICE = Service.NFE_DISTRIBUICAO
_NOTE_KINDS = (DocumentKind.RES_NFE, DocumentKind.NFE_PROC)


@dataclass(frozen=True, slots=True)
class NfeAdapter(SoapProduct):
    """Satisfies ``app.capture.engine.soap.SoapAdapter`` for NF-e. Documents a point query
    recovers get no writes of their own: a recovered summary is not a new arrival, so no
    automatic Ciência comes from there."""

    service: Service = SERVICE
    read: Reader = process_document

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> set[str]:
        """Keys of this lot's notes that are, or become, cancelled: by an event in this lot or by
        one stored before (one read for the lot, only when it has notes)."""
        cancelled = {item.access_key for item in items if is_registered_cancellation(item) and item.access_key}
        notes = {item.access_key for item in items if item.kind in _NOTE_KINDS and item.access_key}
        if notes:
            cancelled |= self.ctx.events.keys_with_event(company.id, PRODUCT, notes, CANCELLATIONS)
        return cancelled

    def within_lot(self, lot: StoredLot) -> None:
        if lot.settings is not None and lot.settings.auto_ciencia:
            _queue_ciencias(lot, lot.settings.ciencia_wait_minutes)
        if isinstance(lot.prepared, set) and lot.prepared:
            lot.unit.mark_cancelled(lot.company.id, PRODUCT, lot.prepared)


def _queue_ciencias(lot: StoredLot, wait_minutes: int) -> None:
    """Automatic Ciência for every summary seen for the first time."""
    for item, outcome in zip(lot.items, lot.stored, strict=True):
        if (
            item.access_key is not None
            and item.kind is DocumentKind.RES_NFE
            and isinstance(outcome, StoredDocument)
            and outcome.created
        ):
            lot.unit.request_manifestation(
                lot.company.id,
                PRODUCT,
                item.access_key,
                CIENCIA,
                not_before=ciencia_due_at(lot.now, wait_minutes),
                automatic=True,
            )
