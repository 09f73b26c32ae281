"""Distribution items: what each NSU brought. Every NSU is stored exactly once per company and
product, so NSU gaps are a range query over ``uq_distribution_items_company_id_product_nsu``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from app.core.nsu import NSU_MAX, missing_nsus
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import DistributionItemRow, DocumentRow
from app.store.records import Product

IN_CHUNK = 500  # values per IN (...) list: far below SQLite's variable limit


def check_nsu(nsu: int) -> None:
    if not 0 <= nsu <= NSU_MAX:
        raise InvalidRecord(f"NSU fora do intervalo de 15 dígitos: {nsu}.")


def record_item_in(
    session: Session,
    company_id: int,
    product: Product,
    nsu: int,
    schema: str | None,
    *,
    document_id: int | None = None,
    event_id: int | None = None,
    now: datetime,
) -> bool:
    """Record that ``nsu`` arrived; False when it was already recorded (its links are then
    filled in if they were missing, never overwritten)."""
    check_nsu(nsu)
    row = session.scalar(
        select(DistributionItemRow).where(
            DistributionItemRow.company_id == company_id,
            DistributionItemRow.product == product.value,
            DistributionItemRow.nsu == nsu,
        )
    )
    if row is not None:
        if row.document_id is not None and (document_id, event_id) != (row.document_id, None):
            _heal_quarantined(session, row, document_id, event_id, schema)
        if row.document_id is None and document_id is not None:
            row.document_id = document_id
        if row.event_id is None and event_id is not None:
            row.event_id = event_id
        return False
    session.add(
        DistributionItemRow(
            company_id=company_id,
            product=product.value,
            nsu=nsu,
            schema=schema,
            document_id=document_id,
            event_id=event_id,
            received_at=now,
        )
    )
    session.flush()
    return True


def _heal_quarantined(
    session: Session, item: DistributionItemRow, document_id: int | None, event_id: int | None, schema: str | None
) -> None:
    """A readable copy of an NSU that arrived corrupt (a point query re-fetched it): the NSU now
    points at the good document or event, and the keyless quarantined copy is dropped."""
    stale = session.get(DocumentRow, item.document_id)
    if stale is None or not stale.quarantined or stale.access_key is not None:
        return
    item.document_id = document_id
    item.event_id = event_id
    item.schema = schema
    session.flush()
    session.delete(stale)  # its versions and parties go with it (ON DELETE CASCADE)
    session.flush()


def quarantined_nsus(session: Session, company_id: int, product: Product, nsus: Iterable[int]) -> set[int]:
    wanted = sorted(set(nsus))
    found: set[int] = set()
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        found.update(
            session.scalars(
                select(DistributionItemRow.nsu)
                .join(DocumentRow, DocumentRow.id == DistributionItemRow.document_id)
                .where(
                    DistributionItemRow.company_id == company_id,
                    DistributionItemRow.product == product.value,
                    DistributionItemRow.nsu.in_(chunk),
                    DocumentRow.quarantined.is_(True),
                )
            )
        )
    return found


class DistributionItemRepository:
    """Record NSUs and find the ones missing in a range."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def record(
        self,
        company_id: int,
        product: Product,
        nsu: int,
        schema: str | None = None,
        *,
        document_id: int | None = None,
        event_id: int | None = None,
    ) -> bool:
        """True if the NSU was new (an item that failed to parse is still recorded)."""
        with self._db.session() as s:
            return record_item_in(
                s,
                company_id,
                product,
                nsu,
                schema,
                document_id=document_id,
                event_id=event_id,
                now=self._db.clock.now(),
            )

    def quarantined(self, company_id: int, product: Product, nsus: Iterable[int]) -> set[int]:
        """Which of ``nsus`` arrived but are held in quarantine (unreadable: worth fetching again)."""
        with self._db.reader() as s:
            return quarantined_nsus(s, company_id, product, nsus)

    def received(self, company_id: int, product: Product, first: int, last: int) -> list[int]:
        """NSUs recorded in ``first..last`` (inclusive), ascending."""
        with self._db.reader() as s:
            return list(
                s.scalars(
                    select(DistributionItemRow.nsu)
                    .where(
                        DistributionItemRow.company_id == company_id,
                        DistributionItemRow.product == product.value,
                        DistributionItemRow.nsu.between(first, last),
                    )
                    .order_by(DistributionItemRow.nsu)
                )
            )

    def missing(self, company_id: int, product: Product, first: int, last: int) -> list[int]:
        """NSUs in ``first..last`` (inclusive) never recorded: the gaps to recover."""
        return list(missing_nsus(self.received(company_id, product, first, last), first, last))

    def first_received_since(self, company_id: int, product: Product, since: datetime) -> int | None:
        """The lowest NSU recorded at or after ``since`` (the start of the daily gap window)."""
        with self._db.reader() as s:
            return s.scalar(
                select(DistributionItemRow.nsu)
                .where(
                    DistributionItemRow.company_id == company_id,
                    DistributionItemRow.product == product.value,
                    DistributionItemRow.received_at >= since,
                )
                .order_by(DistributionItemRow.nsu)
                .limit(1)
            )

    def count_received_since(self, product: Product, since: datetime) -> dict[int, int]:
        """Per company: the NSUs of ``product`` recorded at or after ``since`` (documents and events
        received today, for the status of every company in one grouped read)."""
        with self._db.reader() as s:
            rows = s.execute(
                select(DistributionItemRow.company_id, func.count())
                .where(DistributionItemRow.product == product.value, DistributionItemRow.received_at >= since)
                .group_by(DistributionItemRow.company_id)
            )
            return {company_id: int(count) for company_id, count in rows}

    def count_documents_received_since(self, product: Product, since: datetime) -> dict[int, int]:
        """Per company: the documents of ``product`` that NSUs recorded at or after ``since`` brought,
        each once (a resumo and its complete NF-e are one document; events are not documents)."""
        with self._db.reader() as s:
            rows = s.execute(
                select(DistributionItemRow.company_id, func.count(distinct(DistributionItemRow.document_id)))
                .where(
                    DistributionItemRow.product == product.value,
                    DistributionItemRow.received_at >= since,
                    DistributionItemRow.document_id.is_not(None),
                )
                .group_by(DistributionItemRow.company_id)
            )
            return {company_id: int(count) for company_id, count in rows}
