"""Reads behind the capture dashboard: the gap ledger, documents per month, the call log.

Each is a handful of indexed statements for every company at once, so the dashboard's refresh
every few seconds stays cheap with hundreds of companies.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from sqlalchemy import func, select

from app.store.audit import call_from_row
from app.store.db import Database
from app.store.models import DocumentRow, GapRecoveryRow, GovernmentCallRow
from app.store.records import CallOutcome, CallRecord, GapLedgerLine, GapStatus, Product


class DashboardRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def gap_ledger(self, company_id: int | None = None) -> list[GapLedgerLine]:
        query = select(GapRecoveryRow.company_id, GapRecoveryRow.product, GapRecoveryRow.status, func.count()).group_by(
            GapRecoveryRow.company_id, GapRecoveryRow.product, GapRecoveryRow.status
        )
        if company_id is not None:
            query = query.where(GapRecoveryRow.company_id == company_id)
        counts: dict[tuple[int, str], dict[str, int]] = {}
        with self._db.reader() as s:
            for cid, product, status, count in s.execute(query):
                counts.setdefault((cid, product), {})[status] = count
        return [
            GapLedgerLine(
                company_id=cid,
                product=Product(product),
                found=sum(by_status.values()),
                recovered=by_status.get(GapStatus.RECOVERED.value, 0),
                pending=by_status.get(GapStatus.PENDING.value, 0),
                not_found=by_status.get(GapStatus.NOT_FOUND.value, 0),
                abandoned=by_status.get(GapStatus.ABANDONED.value, 0),
            )
            for (cid, product), by_status in sorted(counts.items())
        ]

    def documents_between(self, company_ids: Sequence[int], product: Product, bounds: Sequence[datetime]) -> list[int]:
        """How many documents were issued in each [bounds[i], bounds[i+1]) (months, in the
        office's zone): one range count per interval on the grid index, portable SQL."""
        counts = []
        with self._db.reader() as s:
            for start, end in pairwise(bounds):
                query = select(func.count()).where(
                    DocumentRow.product == product.value,
                    DocumentRow.issued_at >= start,
                    DocumentRow.issued_at < end,
                )
                if company_ids:
                    query = query.where(DocumentRow.company_id.in_(list(company_ids)))
                counts.append(int(s.scalar(query) or 0))
        return counts

    def calls(
        self,
        *,
        limit: int = 200,
        company_id: int | None = None,
        product: Product | None = None,
        outcomes: Sequence[CallOutcome] = (),
        service: str | None = None,
    ) -> list[CallRecord]:
        """The most recent government calls, newest first, narrowed as the activity log asks."""
        query = select(GovernmentCallRow).order_by(GovernmentCallRow.at.desc(), GovernmentCallRow.id.desc())
        if company_id is not None:
            query = query.where(GovernmentCallRow.company_id == company_id)
        if product is not None:
            query = query.where(GovernmentCallRow.product == product.value)
        if outcomes:
            query = query.where(GovernmentCallRow.outcome.in_([o.value for o in outcomes]))
        if service:
            query = query.where(GovernmentCallRow.service == service)
        with self._db.reader() as s:
            return [call_from_row(r) for r in s.scalars(query.limit(limit))]
