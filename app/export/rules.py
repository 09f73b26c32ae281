"""What is deliverable: the ONE predicate automatic exports and the ERP hand-off obey.

Rule book seed 000: CT-e events outside ``cte_event_types`` and CT-e in which the company holds
none of ``cte_party_roles`` are kept and listed but not delivered, and "events follow the decision
taken for the CT-e they belong to" (§5.1, §5.4 items 4 and 6). NFS-e: the cutoff date and the
own-issued rule (§6.4 item 8) decide at :func:`nfse_deliverable`. A manual export is the user's
explicit choice and does not ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.capture.nfse.processing import withheld_for
from app.core.clock import to_brasilia
from app.export.items import ExportItem
from app.store.records import CaptureSettings, Party, Product


def deliverable(item: ExportItem, settings: CaptureSettings | None) -> bool:
    """True when ``item`` may leave the app (to a folder scanned by an ERP, or its endpoint)."""
    if item.document is not None and item.document.quarantined and item.event is None:
        return False  # unreadable: kept and shown, never handed to another system
    if settings is None:
        return True
    if item.product is Product.CTE:
        return cte_deliverable(item, settings)
    if item.product is Product.NFSE:
        return nfse_deliverable(item, settings)
    return True


def cte_deliverable(item: ExportItem, settings: CaptureSettings) -> bool:
    if item.event is not None and settings.cte_event_types and item.event.tp_evento not in settings.cte_event_types:
        return False
    # A CT-e's events follow the CT-e: when it is stored, its parties decide for both.
    return _holds_a_chosen_role(item.company.cnpj.value, item.parties, settings)


def nfse_deliverable(item: ExportItem, settings: CaptureSettings) -> bool:
    """NFS-e cutoff date and own-issued rule (seed 000 §6.4 item 8), the same rule that keeps
    them out of the grid; an event follows its NFS-e when that is stored."""
    document = item.document
    if document is None:
        return True
    issued = to_brasilia(document.issued_at).date() if document.issued_at is not None else None
    return withheld_for(settings, document.direction, issued) is None


def _holds_a_chosen_role(cnpj: str, parties: Sequence[Party], settings: CaptureSettings) -> bool:
    if not settings.cte_party_roles or not parties:
        return True
    return any(p.tax_id == cnpj and p.role in settings.cte_party_roles for p in parties)
