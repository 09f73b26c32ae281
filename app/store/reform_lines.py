"""The reads behind the IBS/CBS credit report: received, authorised documents of a period.

Two reads, both portable SQL: the documents with a ``document_reform`` row (few: their values are
the report's), streamed; and, for the documents without the reform's groups (many: older ones,
the Simples), only how many there are per company, product and month, counted by the database
in one pass (a CASE over the months' UTC bounds), so a million documents are never fetched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, bindparam, case, func, select, text

from app.store.db import Database
from app.store.models import DocumentRow
from app.store.records import Direction, DocumentStatus, Product
from app.store.reform import VALUE_COLUMNS
from app.store.types import UtcDateTime


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
    values: tuple[int | None, ...]  # centavos, in VALUE_COLUMNS' order


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


# Column names and the filters' text are constants; every value is bound.
_LINES = (
    "SELECT d.id, d.company_id, d.product, d.access_key, d.number, d.emitter_id, d.emitter_name, d.issued_at, "  # noqa: S608
    f"r.purpose, r.has_groups, r.unreadable, {', '.join('r.' + c for c in VALUE_COLUMNS)} "
    "FROM document_reform AS r CROSS JOIN documents AS d "
    "WHERE d.id = r.document_id AND d.direction = :direction AND d.status = :status "
    "AND d.quarantined = false AND d.withheld IS NULL AND d.issued_at >= :start AND d.issued_at < :end{filters} "
    "ORDER BY d.issued_at, d.id"
)


def _instant(value: object) -> datetime:
    """A raw ``issued_at`` (SQLite's text, PostgreSQL's naive timestamp) as an aware UTC instant."""
    if isinstance(value, str):
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC)


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
        """Documents with a reform row, oldest first. Read from the reform rows (the few) to their
        documents by primary key: ``CROSS JOIN`` keeps that order in SQLite's planner (and means
        an inner join in PostgreSQL too); an inner join let it scan every document instead."""
        filters = ""
        params: dict[str, object] = {
            "direction": Direction.RECEIVED.value, "status": DocumentStatus.AUTHORISED.value, "start": start,
            "end": end,
        }  # fmt: skip
        if company_ids:
            filters += " AND d.company_id IN :companies"
            params["companies"] = list(company_ids)
        if products:
            filters += " AND d.product IN :products"
            params["products"] = [p.value for p in products]
        statement = text(_LINES.format(filters=filters)).bindparams(
            bindparam("start", type_=UtcDateTime()), bindparam("end", type_=UtcDateTime())
        )
        if company_ids:
            statement = statement.bindparams(bindparam("companies", expanding=True))
        if products:
            statement = statement.bindparams(bindparam("products", expanding=True))
        with self._db.read_connection() as connection:
            for row in connection.execute(statement, params):
                yield CreditLine(
                    row[0], row[1], Product(row[2]), row[3], row[4], row[5], row[6], _instant(row[7]), row[8],
                    bool(row[9]), bool(row[10]), tuple(row[11:]),
                )  # fmt: skip

    def received_counts(
        self, company_ids: Sequence[int], products: Sequence[Product], months: Sequence[datetime]
    ) -> dict[tuple[int, Product, int], int]:
        """How many documents were received per (company, product, month index), groups or not
        (the caller subtracts those :meth:`lines` gives: one pass over the documents, no
        correlated look-up per row): ``months`` are the bounds, month i is [months[i], months[i + 1])."""
        if len(months) < 2:
            return {}
        bucket = case(
            *[(DocumentRow.issued_at < bound, index) for index, bound in enumerate(months[1:])],
            else_=-1,
        )
        # The bucket first: grouping by (company, product) first made SQLite walk ix_documents_nsu
        # and fetch every row at random; this way it scans in issue order.
        query = (
            select(bucket, DocumentRow.company_id, DocumentRow.product, func.count())
            .where(*_received(company_ids, products, months[0], months[-1]))
            .group_by(bucket, DocumentRow.company_id, DocumentRow.product)
        )
        with self._db.reader() as s:
            return {(cid, Product(product), index): count for index, cid, product, count in s.execute(query)}
