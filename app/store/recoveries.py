"""Pending gap recoveries: NSUs (or keys) to fetch one by one with consNSU/consChNFe."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import GapRecoveryRow
from app.store.prepared import Prepared
from app.store.records import GapRecovery, GapStatus, Product
from app.store.types import utc_text

_ADD_COLUMNS = ("company_id", "product", "nsu", "access_key", "attempts", "next_attempt_at", "status")
_ADD = Prepared(
    insert(GapRecoveryRow)
    .values({name: bindparam(name) for name in (*_ADD_COLUMNS, "created_at", "updated_at")})
    .on_conflict_do_nothing()
)
# Read at every step of the scheduler loop: prepared once.
_NEXT_ATTEMPT = Prepared(
    select(func.min(GapRecoveryRow.next_attempt_at)).where(
        GapRecoveryRow.status == bindparam("status"), GapRecoveryRow.product == bindparam("product")
    )
)


class UnknownGap(InvalidRecord, LookupError):
    """No gap recovery with that id."""


def _gap(row: GapRecoveryRow) -> GapRecovery:
    return GapRecovery(
        id=row.id,
        company_id=row.company_id,
        product=Product(row.product),
        nsu=row.nsu,
        access_key=row.access_key,
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        status=GapStatus(row.status),
        last_error=row.last_error,
    )


def add_recoveries_in(
    connection: Session | Connection | Any,
    company_id: int,
    product: Product,
    now: datetime,
    *,
    next_attempt_at: datetime,
    nsus: tuple[int, ...] = (),
    access_key: str | None = None,
) -> int:
    """``GapRecoveryRepository.add`` inside an open write transaction; returns how many were new."""
    if not nsus and access_key is None:
        raise InvalidRecord("Lacuna sem NSU e sem chave de acesso.")
    target = connection.connection() if isinstance(connection, Session) else connection
    base = {
        "company_id": company_id,
        "product": product.value,
        "attempts": 0,
        "next_attempt_at": utc_text(next_attempt_at),
        "status": GapStatus.PENDING.value,
        "created_at": utc_text(now),
        "updated_at": utc_text(now),
    }
    rows = [{**base, "nsu": n, "access_key": None} for n in nsus]
    if access_key is not None:
        rows.append({**base, "nsu": None, "access_key": access_key})
    return sum(_ADD.changed(target, values) for values in rows)


class GapRecoveryRepository:
    """Add gaps idempotently, list the due ones, record each attempt."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self,
        company_id: int,
        product: Product,
        *,
        next_attempt_at: datetime,
        nsus: tuple[int, ...] = (),
        access_key: str | None = None,
    ) -> int:
        """Queue NSUs (and/or one key); ones already queued are left alone. Returns how many were new."""
        with self._db.session() as s:
            return add_recoveries_in(
                s,
                company_id,
                product,
                self._db.clock.now(),
                next_attempt_at=next_attempt_at,
                nsus=nsus,
                access_key=access_key,
            )

    def queue_key(self, company_id: int, product: Product, access_key: str) -> bool:
        """A user's fetch by key left to the capture node: queued now, or a finished one of the same
        key (found, not found, given up) queued again; False when it is pending already (asked
        twice: one query)."""
        now = self._db.clock.now()
        with self._db.session() as s:
            row = s.scalars(
                select(GapRecoveryRow).where(
                    GapRecoveryRow.company_id == company_id,
                    GapRecoveryRow.product == product.value,
                    GapRecoveryRow.access_key == access_key,
                )
            ).first()
            if row is None:
                return add_recoveries_in(s, company_id, product, now, next_attempt_at=now, access_key=access_key) == 1
            if row.status == GapStatus.PENDING.value:
                return False
            row.status, row.attempts, row.next_attempt_at = GapStatus.PENDING.value, 0, now
            row.last_error, row.updated_at = None, now
            return True

    def next_attempt_at(self, product: Product) -> datetime | None:
        """The earliest pending attempt of ``product`` (the scheduler's wake-up), in one indexed read."""
        with self._db.driver_connection() as connection:  # autocommit: one statement, its own snapshot
            row = _NEXT_ATTEMPT.first_on_driver(
                connection, {"status": GapStatus.PENDING.value, "product": product.value}
            )
        return row[0] if row is not None else None

    def due(self, now: datetime, limit: int = 100, product: Product | None = None) -> list[GapRecovery]:
        if product is not None:
            # The dispatcher asks every few minutes and there is usually nothing: the indexed
            # earliest-attempt read answers that for a fraction of the full query's cost.
            first = self.next_attempt_at(product)
            if first is None or first > now:
                return []
        query = (
            select(GapRecoveryRow)
            .where(
                GapRecoveryRow.status == GapStatus.PENDING.value,
                GapRecoveryRow.next_attempt_at <= now,
            )
            .order_by(GapRecoveryRow.next_attempt_at, GapRecoveryRow.id)
            .limit(limit)
        )
        if product is not None:
            query = query.where(GapRecoveryRow.product == product.value)
        with self._db.reader() as s:
            return [_gap(r) for r in s.scalars(query)]

    def pending(self, company_id: int, product: Product) -> list[GapRecovery]:
        with self._db.reader() as s:
            rows = s.scalars(
                select(GapRecoveryRow)
                .where(
                    GapRecoveryRow.company_id == company_id,
                    GapRecoveryRow.product == product.value,
                    GapRecoveryRow.status == GapStatus.PENDING.value,
                )
                .order_by(GapRecoveryRow.nsu.nulls_first(), GapRecoveryRow.id)  # SQLite's order everywhere
            )
            return [_gap(r) for r in rows]

    def update(
        self,
        gap_id: int,
        *,
        status: GapStatus,
        next_attempt_at: datetime | None = None,
        count_attempt: bool = True,
        last_error: str | None = None,
    ) -> GapRecovery:
        """Record an attempt's result. A deferral for lack of quota passes ``count_attempt=False``."""
        with self._db.session() as s:
            row = s.get(GapRecoveryRow, gap_id)
            if row is None:
                raise UnknownGap(f"Lacuna não encontrada (id {gap_id}).")
            row.status = status.value
            if count_attempt:
                row.attempts += 1
            if next_attempt_at is not None:
                row.next_attempt_at = next_attempt_at
            row.last_error = last_error
            row.updated_at = self._db.clock.now()
            return _gap(row)
