"""The reads behind the reports: narrow rows, streamed, grouped by the caller.

Months are taken in Python from each document's own offset (SQL date functions differ between
SQLite and PostgreSQL; a month is the one printed on the document, not UTC's).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.store.db import Database
from app.store.models import DocumentRow, GapRecoveryRow
from app.store.records import Direction, DocumentKind, DocumentStatus, GapStatus, Product


@dataclass(frozen=True, slots=True)
class SummaryLine:
    company_id: int
    product: Product
    kind: DocumentKind
    direction: Direction
    status: DocumentStatus
    issued_at: datetime | None
    issued_offset_minutes: int | None
    total_cents: int | None


@dataclass(frozen=True, slots=True)
class GapLine:
    company_id: int
    product: Product
    nsu: int | None
    access_key: str | None
    status: GapStatus
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    updated_at: datetime


class ReportRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def summary_lines(
        self,
        *,
        company_ids: Sequence[int] = (),
        products: Sequence[Product] = (),
        issued_from: datetime | None = None,
        issued_to: datetime | None = None,
    ) -> Iterator[SummaryLine]:
        """Every readable document's facts for the monthly summary, in pages of 2,000 rows."""
        query = select(
            DocumentRow.company_id,
            DocumentRow.product,
            DocumentRow.kind,
            DocumentRow.direction,
            DocumentRow.status,
            DocumentRow.issued_at,
            DocumentRow.issued_offset_minutes,
            DocumentRow.total_cents,
        ).where(DocumentRow.quarantined.is_(False))
        if company_ids:
            query = query.where(DocumentRow.company_id.in_(list(company_ids)))
        if products:
            query = query.where(DocumentRow.product.in_([p.value for p in products]))
        if issued_from is not None:
            query = query.where(DocumentRow.issued_at >= issued_from)
        if issued_to is not None:
            query = query.where(DocumentRow.issued_at < issued_to)
        with self._db.reader() as s:
            for cid, product, kind, direction, status, issued, offset, cents in s.execute(
                query.execution_options(yield_per=2000)
            ):
                yield SummaryLine(
                    cid,
                    Product(product),
                    DocumentKind(kind),
                    Direction(direction),
                    DocumentStatus(status),
                    issued,
                    offset,
                    cents,
                )

    def gap_lines(self, *, company_ids: Sequence[int] = (), products: Sequence[Product] = ()) -> list[GapLine]:
        """The gap ledger: every NSU hole found, recovered or still pending, oldest first."""
        query = select(GapRecoveryRow).order_by(GapRecoveryRow.company_id, GapRecoveryRow.product, GapRecoveryRow.id)
        if company_ids:
            query = query.where(GapRecoveryRow.company_id.in_(list(company_ids)))
        if products:
            query = query.where(GapRecoveryRow.product.in_([p.value for p in products]))
        with self._db.reader() as s:
            return [
                GapLine(
                    r.company_id,
                    Product(r.product),
                    r.nsu,
                    r.access_key,
                    GapStatus(r.status),
                    r.attempts,
                    r.next_attempt_at,
                    r.last_error,
                    r.created_at,
                    r.updated_at,
                )
                for r in s.scalars(query)
            ]
