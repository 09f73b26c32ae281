"""CT-e Inbound on the distribution engine (rule book §5): what only CT-e does with a lot.

Its answer policy is ``app.core.cadence_cte`` (a 656 is a plain one-hour block); every exchange is
archived (``app.core.archive``); each CT-e's carried NF-e keys are linked in the lot's own
transaction. The company's filters (§5.1, §5.4 items 4 and 6) only decide what notifies: an event
whose type is not in ``cte_event_types``, or a CT-e in which the company holds none of
``cte_party_roles``, is stored and listed like any other, and stays silent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.capture.context import CaptureContext
from app.capture.cte.processing import PRODUCT, process_document
from app.capture.engine.adapter import LotAnswer, RunSoFar, Stored, StoreInput
from app.capture.engine.soap import OPERATION, soap_lot
from app.config.endpoints import Service
from app.core.cadence import CaptureState, rules_for
from app.core.cadence_an import AnswerPolicy
from app.core.cadence_cte import apply_cte_distribution
from app.core.ids import Cnpj
from app.core.products import Product
from app.fiscal.distribution import DistributedDocument
from app.store.records import CaptureSettings, Company, DocumentInput, EventInput
from app.store.unit import Unit

SERVICE = Service.CTE_DISTRIBUICAO


def notifies(company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
    """The company's CT-e filters applied to one stored item (an empty filter lets all through)."""
    if isinstance(item, EventInput):
        return not settings.cte_event_types or item.tp_evento in settings.cte_event_types
    if item.parse_error:
        return False
    if not settings.cte_party_roles or not item.parties:
        return True
    me = company.cnpj.value
    return any(party.tax_id == me and party.role in settings.cte_party_roles for party in item.parties)


@dataclass(frozen=True, slots=True)
class CteAdapter:
    """Satisfies ``app.capture.engine.soap.SoapAdapter`` for CT-e."""

    ctx: CaptureContext
    product: Product = PRODUCT
    service: Service = SERVICE
    policy: AnswerPolicy = apply_cte_distribution
    job_type: str = "cte_distribution"
    operation: str = OPERATION

    def query(self, company: Company, settings: CaptureSettings, state: CaptureState, run: RunSoFar) -> LotAnswer:
        return soap_lot(self.ctx, self, rules_for(self.product), company, settings, state)

    def process(self, company: Cnpj, doc: DistributedDocument, settings: CaptureSettings | None) -> StoreInput:
        return process_document(company, doc)

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        return notifies(company, settings, item)

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> None:
        return None

    def within_lot(
        self,
        unit: Unit,
        company: Company,
        settings: CaptureSettings | None,
        items: Sequence[StoreInput],
        stored: Sequence[Stored],
        prepared: object,
        now: datetime,
    ) -> None:
        _link(unit, company, items)

    def within_recovery(
        self, unit: Unit, company: Company, items: Sequence[StoreInput], stored: Sequence[Stored]
    ) -> None:
        _link(unit, company, items)


def _link(unit: Unit, company: Company, items: Sequence[StoreInput]) -> None:
    """Each CT-e's carried NF-e keys, so one goes from an NF-e to the CT-e that moved it."""
    for item in items:
        if isinstance(item, DocumentInput) and item.access_key and item.carried_keys:
            unit.link_carried_nfe(company.id, item.access_key, item.carried_keys)
