"""The reads behind the IBS/CBS credit report: received, authorised documents of a period.

Two reads, both portable SQL: the documents with a ``document_reform`` row (few: their values are
the report's), streamed; and, for the documents without the reform's groups (many: older ones,
the Simples), only how many there are per company, product and month, counted by the database
in one pass (a CASE over the months' UTC bounds), so a million documents are never fetched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, case, exists, func, select

from app.store.db import Database
from app.store.models import DocumentReformRow, DocumentRow
from app.store.records import Direction, DocumentStatus, Product
from app.store.reform import VALUE_COLUMNS


@dataclass(frozen=True, slots=True)
class CreditLine:
    """One received document with reform values (or a note without them), as the report needs it."""

    document_id: int
    company_id: int
    product: Product
    access_key: str | None
    number: int | None
    emitter_id: str | None
    emitter_name: str | None
    issued_at: datetime
    purpose: str | None
    has_groups: bool
    unreadable: bool
    values: dict[str, int | None]  # VALUE_COLUMNS -> centavos


def _received(
    company_ids: Sequence[int], products: Sequence[Product], start: datetime | None, end: datetime | None
) -> list[ColumnElement[bool]]:
    """Received, authorised (so not cancelled), readable and listed documents issued in [start, end)."""
    where = [
        DocumentRow.direction == Direction.RECEIVED.value,
        DocumentRow.status == DocumentStatus.AUTHORISED.value,
        DocumentRow.quarantined.is_(False),
        DocumentRow.withheld.is_(None),
    ]
    if start is not None:
        where.append(DocumentRow.issued_at >= start)
    if end is not None:
        where.append(DocumentRow.issued_at < end)
    if company_ids:
        where.append(DocumentRow.company_id.in_(list(company_ids)))
    if products:
        where.append(DocumentRow.product.in_([p.value for p in products]))
    return where


class ReformLines:
    def __init__(self, db: Database) -> None:
        self._db = db

    def bounds(
        self, company_ids: Sequence[int], products: Sequence[Product], start: datetime | None, end: datetime | None
    ) -> tuple[datetime | None, datetime | None]:
        """The first and last issue instants of the received documents (None, None: there are none)."""
        query = select(func.min(DocumentRow.issued_at), func.max(DocumentRow.issued_at)).where(
            *_received(company_ids, products, start, end)
        )
        with self._db.reader() as s:
            first, last = s.execute(query).one()
        return first, last

    def lines(
        self, company_ids: Sequence[int], products: Sequence[Product], start: datetime, end: datetime
    ) -> Iterator[CreditLine]:
        """Documents with a reform row, oldest first."""
        columns = [getattr(DocumentReformRow, name) for name in VALUE_COLUMNS]
        document = (
            DocumentRow.id, DocumentRow.company_id, DocumentRow.product, DocumentRow.access_key,
            DocumentRow.number, DocumentRow.emitter_id, DocumentRow.emitter_name, DocumentRow.issued_at,
        )  # fmt: skip
        reform = (DocumentReformRow.purpose, DocumentReformRow.has_groups, DocumentReformRow.unreadable)
        query = (
            select(*document, *reform, *columns)
            .join(DocumentReformRow, DocumentReformRow.document_id == DocumentRow.id)
            .where(*_received(company_ids, products, start, end))
            .order_by(DocumentRow.issued_at, DocumentRow.id)
        )
        with self._db.reader() as s:
            for row in s.execute(query.execution_options(yield_per=2000)):
                yield CreditLine(
                    row[0], row[1], Product(row[2]), row[3], row[4], row[5], row[6], row[7], row[8],
                    bool(row[9]), bool(row[10]), dict(zip(VALUE_COLUMNS, row[11:], strict=True)),
                )  # fmt: skip

    def uncovered(
        self, company_ids: Sequence[int], products: Sequence[Product], months: Sequence[datetime]
    ) -> dict[tuple[int, Product, int], int]:
        """How many documents without the reform's groups (no row, or a note without them) per
        (company, product, month index): ``months`` are the UTC bounds, month i is
        [months[i], months[i + 1])."""
        if len(months) < 2:
            return {}
        bucket = case(
            *[(DocumentRow.issued_at < bound, index) for index, bound in enumerate(months[1:])],
            else_=-1,
        )
        with_groups = exists().where(
            and_(DocumentReformRow.document_id == DocumentRow.id, DocumentReformRow.has_groups.is_(True))
        )
        query = (
            select(DocumentRow.company_id, DocumentRow.product, bucket, func.count())
            .where(*_received(company_ids, products, months[0], months[-1]), ~with_groups)
            .group_by(DocumentRow.company_id, DocumentRow.product, bucket)
        )
        with self._db.reader() as s:
            return {(cid, Product(product), index): count for cid, product, index, count in s.execute(query)}
