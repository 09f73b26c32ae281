"""What a person must not miss, for the window's banner and the tray: cancellations after capture,
manifestation deadlines within 5 days, quarantined documents (``Desk.alerts``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.core.manifestation import CIENCIA, CONFIRMACAO, MANIFESTATION_TYPES, ManifestationState
from app.core.products import Product
from app.desk.views import Alerts
from app.store.grid import GridRepository
from app.store.records import Direction, DocumentStatus, GridQuery, RowKind

WARN_DAYS = 5  # a deadline this close counts


def alerts(grid: GridRepository, product: Product, company_ids: tuple[int, ...], now: datetime) -> Alerts:
    """The banner's counts for one product and the selected companies (all when empty)."""
    soon = 0
    if product is Product.NFE:

        def due(days: int, state: ManifestationState) -> int:
            """Received NF-e in ``state`` whose ``days``-day deadline ends within 5 days."""
            query = GridQuery(
                product,
                company_ids,
                issued_from=now - timedelta(days=days),
                issued_to=now - timedelta(days=days - WARN_DAYS),
                direction=Direction.RECEIVED,
                row_kinds=(RowKind.SUMMARY, RowKind.COMPLETE),
                statuses=(DocumentStatus.SUMMARY, DocumentStatus.AUTHORISED),
                manifestation=state,
            )
            return grid.count(query)

        # Ciência within 10 days of authorisation, a conclusive event within 90 (protocol.md §3.7).
        soon = due(MANIFESTATION_TYPES[CIENCIA].deadline_days, ManifestationState.NONE) + due(
            MANIFESTATION_TYPES[CONFIRMACAO].deadline_days, ManifestationState.CIENCIA
        )
    return Alerts(
        cancelled_after_capture=grid.cancelled_after_capture(product, company_ids),
        deadlines_within_5_days=soon,
        quarantined=grid.count_quarantined(product, company_ids),
    )
