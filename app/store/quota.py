"""The point-query quota ledger: consNSU/consChNFe, 20 that return a document per hour per CNPJ
(rule book §4.6), counted in a sliding window. The rule lives in app.core; this is its memory."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select

from app.core.ids import Cnpj
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import PointQueryRow
from app.store.records import Product


class PointQueryLedger:
    """Record point queries and read the window back."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def record(
        self,
        cnpj: Cnpj,
        product: Product,
        *,
        queried_at: datetime,
        returned_document: bool,
        nsu: int | None = None,
        access_key: str | None = None,
    ) -> int:
        if nsu is None and access_key is None:
            raise InvalidRecord("Consulta pontual sem NSU e sem chave de acesso.")
        row = PointQueryRow(
            cnpj=cnpj.value,
            product=product.value,
            nsu=nsu,
            access_key=access_key,
            queried_at=queried_at,
            returned_document=returned_document,
        )
        with self._db.session() as s:
            s.add(row)
            s.flush()
            return row.id

    def counted_since(self, cnpj: Cnpj, product: Product, since: datetime) -> list[datetime]:
        """Times of the queries that returned a document since ``since``, oldest first: with them
        the rule can tell both whether a slot is free and when the next one opens."""
        with self._db.reader() as s:
            return list(
                s.scalars(
                    select(PointQueryRow.queried_at)
                    .where(
                        PointQueryRow.cnpj == cnpj.value,
                        PointQueryRow.product == product.value,
                        PointQueryRow.queried_at >= since,
                        PointQueryRow.returned_document.is_(True),
                    )
                    .order_by(PointQueryRow.queried_at)
                )
            )

    def count_since(self, cnpj: Cnpj, product: Product, since: datetime) -> int:
        with self._db.reader() as s:
            return (
                s.scalar(
                    select(func.count())
                    .select_from(PointQueryRow)
                    .where(
                        PointQueryRow.cnpj == cnpj.value,
                        PointQueryRow.product == product.value,
                        PointQueryRow.queried_at >= since,
                        PointQueryRow.returned_document.is_(True),
                    )
                )
                or 0
            )

    def forget_before(self, before: datetime) -> int:
        """Drop ledger rows older than ``before`` (only the last hour matters to the rule)."""
        with self._db.session() as s:
            result = s.execute(delete(PointQueryRow).where(PointQueryRow.queried_at < before))
            return int(getattr(result, "rowcount", 0) or 0)
