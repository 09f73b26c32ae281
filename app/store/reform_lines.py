"""The reads behind the IBS/CBS credit report: received, authorised documents of a period.

Two reads, both portable SQL: the documents with a ``document_reform`` row (few: their values are
the report's), streamed; and, for the documents without the reform's groups (many: older ones,
the Simples), only how many there are per company, product and month, counted by the database
from a covering index a month at a time, so a million documents are never fetched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

from sqlalchemy import ColumnElement, bindparam, func, select, text

from app.core.clock import BRASILIA
from app.store.db import Database
from app.store.models import DocumentRow
from app.store.models.documents import RECEIVED_AUTHORISED
from app.store.prepared import placeholders
from app.store.records import Direction, DocumentStatus, Product
from app.store.reform import VALUE_COLUMNS
from app.store.types import utc_text

_PRODUCTS = {p.value: p for p in Product}
_PARTITION = 2_000  # rows fetched at a time
_SEEKS_PER_COMPANY = 20  # more companies than this: the product's bounds, not each company's


class CreditLine(NamedTuple):
    """One received document with reform values (or a note without them), as the report needs it:
    a tuple, built a few times faster than a frozen dataclass (the report reads 190,000 of them
    at a million documents)."""

    document_id: int
    company_id: int
    product: Product
    access_key: str | None
    number: int | None
    emitter_id: str | None
    emitter_name: str | None
    issued_local: datetime  # naive: the wall time in Brasília (the report's month and "Emissão")
    purpose: str | None
    has_groups: bool
    unreadable: bool
    values: tuple[int | None, ...]  # centavos, in VALUE_COLUMNS' order


# The count's statement: received, authorised (so not cancelled), readable and listed documents
# issued in a month, per company and product. Its WHERE is literal, not bound: the text of
# ix_documents_received_issued's, so that SQLite reads that partial index (revision 0015).
_COUNT = (
    select(DocumentRow.company_id, DocumentRow.product, func.count())
    .where(text(RECEIVED_AUTHORISED))
    .where(DocumentRow.issued_at >= bindparam("low"), DocumentRow.issued_at < bindparam("high"))
    .group_by(DocumentRow.company_id, DocumentRow.product)
)


# Column names and the filters' text are constants; every value is bound.
_LINES = (
    "SELECT d.id, d.company_id, d.product, d.access_key, d.number, d.emitter_id, d.emitter_name, d.issued_at, "  # noqa: S608
    f"r.purpose, r.has_groups, r.unreadable, {', '.join('r.' + c for c in VALUE_COLUMNS)} "
    "FROM document_reform AS r CROSS JOIN documents AS d "
    "WHERE d.id = r.document_id AND d.direction = ? AND d.status = ? "
    "AND d.quarantined = ? AND d.withheld IS NULL AND d.issued_at >= ? AND d.issued_at < ?{filters} "
    "ORDER BY d.issued_at, d.id"
)


@lru_cache(maxsize=1 << 16)
def _offset(hour: datetime) -> timedelta:
    """Brasília's offset from UTC in the UTC hour ``hour`` (naive): old dates had summer time."""
    return hour.replace(tzinfo=UTC).astimezone(BRASILIA).utcoffset() or timedelta()


def _local(value: object, offsets: dict[object, timedelta]) -> datetime:
    """A raw ``issued_at`` (UTC: SQLite's text, PostgreSQL's naive timestamp) as the naive wall time
    in Brasília, the zone looked up once an hour of issue: ``offsets`` keeps each hour's offset by
    the text's first 13 characters (a slice and a dict look-up a row, half the time of building
    the hour's datetime for the LRU cache)."""
    hour: object
    if isinstance(value, str):
        instant, hour = datetime.fromisoformat(value), value[:13]  # 'YYYY-MM-DD HH'
    else:
        assert isinstance(value, datetime)
        instant, hour = value, (value.year, value.month, value.day, value.hour)
    offset = offsets.get(hour)
    if offset is None:
        offset = offsets[hour] = _offset(datetime(instant.year, instant.month, instant.day, instant.hour))
    return instant + offset


class ReformLines:
    def __init__(self, db: Database) -> None:
        self._db = db

    def bounds(
        self, company_ids: Sequence[int], products: Sequence[Product], start: datetime | None, end: datetime | None
    ) -> tuple[datetime | None, datetime | None]:
        """The first and last issue instants of the products' documents in [start, end) (None, None:
        there are none): wider than the received ones may be (only the months between them are
        counted, and a month without documents gives no row), but each bound is one index seek
        (``ix_documents_product_grid``, or ``ix_documents_grid`` for a few companies), where the
        received ones' were a scan of every document."""
        scopes: list[list[ColumnElement[bool]]] = []
        for product in products or list(Product):
            where = [DocumentRow.product == product.value, DocumentRow.issued_at.is_not(None)]
            if start is not None:
                where.append(DocumentRow.issued_at >= start)
            if end is not None:
                where.append(DocumentRow.issued_at < end)
            if company_ids and len(company_ids) <= _SEEKS_PER_COMPANY:
                scopes.extend([*where, DocumentRow.company_id == cid] for cid in company_ids)
            else:
                scopes.append(where)
        firsts, lasts = [], []
        with self._db.reader() as s:
            for where in scopes:
                # One aggregate per statement: SQLite answers a lone min() or max() from the index.
                first = s.scalar(select(func.min(DocumentRow.issued_at)).where(*where))
                if first is not None:
                    firsts.append(first)
                    lasts.append(s.scalar(select(func.max(DocumentRow.issued_at)).where(*where)))
        if not firsts:
            return None, None
        return min(firsts), max(last for last in lasts if last is not None)

    def lines(
        self, company_ids: Sequence[int], products: Sequence[Product], start: datetime, end: datetime
    ) -> Iterator[CreditLine]:
        """Documents with a reform row, oldest first. Read from the reform rows (the few) to their
        documents by primary key: ``CROSS JOIN`` keeps that order in SQLite's planner (and means
        an inner join in PostgreSQL too); an inner join let it scan every document instead. On the
        driver's own connection, a batch of tuples at a time: the ORM's rows cost more than the
        query itself at a million documents."""
        filters = ""
        params: list[object] = [
            Direction.RECEIVED.value, DocumentStatus.AUTHORISED.value, False, utc_text(start), utc_text(end),
        ]  # fmt: skip
        if company_ids:
            filters += f" AND d.company_id IN ({placeholders(len(company_ids))})"
            params.extend(company_ids)
        if products:
            filters += f" AND d.product IN ({placeholders(len(products))})"
            params.extend(p.value for p in products)
        offsets: dict[object, timedelta] = {}
        with self._db.driver_connection() as driver:
            cursor = driver.execute(_LINES.format(filters=filters), tuple(params))
            while rows := cursor.fetchmany(_PARTITION):
                for row in rows:
                    yield CreditLine(
                        row[0], row[1], _PRODUCTS[row[2]], row[3], row[4], row[5], row[6],
                        _local(row[7], offsets), row[8], bool(row[9]), bool(row[10]), tuple(row[11:]),
                    )  # fmt: skip

    def received_counts(
        self, company_ids: Sequence[int], products: Sequence[Product], months: Sequence[datetime]
    ) -> dict[tuple[int, Product, int], int]:
        """How many documents were received per (company, product, month index), groups or not
        (the caller subtracts those :meth:`lines` gives: no correlated look-up per row): ``months``
        are the bounds, month i is [months[i], months[i + 1]). One range of
        ``ix_documents_received_issued`` a month, which holds every column the count reads: a
        third of the CPU time of one pass bucketing each row in a CASE and sorting them all.
        Companies and products are picked here, not in the SQL: given a company, SQLite walked
        ix_documents_nsu and read each of its documents from the table, every month again."""
        wanted_companies, wanted_products = set(company_ids), {p.value for p in products}
        with self._db.reader() as s:
            return {
                (cid, _PRODUCTS[product], index): count
                for index, (low, high) in enumerate(pairwise(months))
                for cid, product, count in s.execute(_COUNT, {"low": low, "high": high})
                if (not wanted_companies or cid in wanted_companies)
                and (not wanted_products or product in wanted_products)
            }
