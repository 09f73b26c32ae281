"""CT-e Inbound on the distribution engine (rule book §5): what only CT-e does with a lot.

Its answer policy is ``app.core.cadence_cte`` (a 656 is a plain one-hour block); every exchange is
archived (``app.core.archive``); each CT-e's carried NF-e keys are linked in the lot's own
transaction. The company's filters (§5.1, §5.4 items 4 and 6) only decide what notifies: an event
whose type is not in ``cte_event_types``, or a CT-e in which the company holds none of
``cte_party_roles``, is stored and listed like any other, and stays silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.capture.cte.processing import process_document
from app.capture.engine.adapter import StoredLot, StoreInput
from app.capture.engine.soap import Reader, SoapProduct
from app.config.endpoints import Service
from app.store.records import CaptureSettings, Company, DocumentInput, EventInput

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
class CteAdapter(SoapProduct):
    """Satisfies ``app.capture.engine.soap.SoapAdapter`` for CT-e."""

    service: Service = SERVICE
    read: Reader = process_document

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        return notifies(company, settings, item)

    def within_lot(self, lot: StoredLot) -> None:
        _link(lot)

    def within_recovery(self, lot: StoredLot) -> None:
        _link(lot)


def _link(lot: StoredLot) -> None:
    """Each CT-e's carried NF-e keys, so one goes from an NF-e to the CT-e that moved it."""
    for item in lot.items:
        if isinstance(item, DocumentInput) and item.access_key and item.carried_keys:
            lot.unit.link_carried_nfe(lot.company.id, item.access_key, item.carried_keys)
