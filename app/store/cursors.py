"""The cursor and cadence state per company and product, and global service pauses."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import CaptureStateRow, ServicePauseRow
from app.store.records import CaptureState, Environment, Product, ServicePause

_STATE_FIELDS = tuple(f.name for f in fields(CaptureState) if f.name not in ("company_id", "product"))


def _state(row: CaptureStateRow) -> CaptureState:
    values: dict[str, Any] = {name: getattr(row, name) for name in _STATE_FIELDS}
    return CaptureState(company_id=row.company_id, product=Product(row.product), **values)


class CaptureStateRepository:
    """Read and save ``CaptureState``; a company never queried has the default state (NSU 0)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, company_id: int, product: Product) -> CaptureState:
        with self._db.reader() as s:
            row = s.scalar(
                select(CaptureStateRow).where(
                    CaptureStateRow.company_id == company_id, CaptureStateRow.product == product.value
                )
            )
            return _state(row) if row is not None else CaptureState(company_id, product)

    def save(self, state: CaptureState) -> CaptureState:
        """Insert or replace the whole state (engines build it with ``dataclasses.replace``)."""
        if state.ult_nsu < 0 or state.max_nsu < 0:
            raise InvalidRecord(f"NSU negativo no estado de captura: {state.ult_nsu}/{state.max_nsu}.")
        with self._db.session() as s:
            save_state_in(s, state, self._db.clock.now())
        return state

    def list_states(self, product: Product) -> list[CaptureState]:
        with self._db.reader() as s:
            rows = s.scalars(
                select(CaptureStateRow)
                .where(CaptureStateRow.product == product.value)
                .order_by(CaptureStateRow.company_id)
            )
            return [_state(r) for r in rows]

    # ------------------------------------------------------------------ global pauses

    def set_pause(
        self,
        product: Product,
        environment: Environment,
        paused_until: datetime,
        reason: str,
        cstat: str | None = None,
    ) -> ServicePause:
        values = {
            "product": product.value,
            "environment": environment.key,
            "paused_until": paused_until,
            "reason": reason,
            "cstat": cstat,
        }
        statement = insert(ServicePauseRow).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=["product", "environment"],
            set_={"paused_until": paused_until, "reason": reason, "cstat": cstat},
        )
        with self._db.session() as s:
            s.execute(statement)
        return ServicePause(product, environment, paused_until, reason, cstat)

    def get_pause(self, product: Product, environment: Environment) -> ServicePause | None:
        with self._db.reader() as s:
            row = s.scalar(
                select(ServicePauseRow).where(
                    ServicePauseRow.product == product.value,
                    ServicePauseRow.environment == environment.key,
                )
            )
            if row is None:
                return None
            return ServicePause(product, environment, row.paused_until, row.reason, row.cstat)

    def clear_pause(self, product: Product, environment: Environment) -> None:
        with self._db.session() as s:
            s.execute(
                delete(ServicePauseRow).where(
                    ServicePauseRow.product == product.value,
                    ServicePauseRow.environment == environment.key,
                )
            )


def save_state_in(session: Session, state: CaptureState, now: datetime) -> None:
    """Upsert ``state`` inside an open write session (so a batch and its cursor commit together)."""
    values: dict[str, Any] = {name: getattr(state, name) for name in _STATE_FIELDS}
    values["updated_at"] = now
    statement = insert(CaptureStateRow).values(
        company_id=state.company_id, product=state.product.value, **values
    )
    statement = statement.on_conflict_do_update(index_elements=["company_id", "product"], set_=values)
    session.execute(statement)
