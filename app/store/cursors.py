"""The cursor and cadence state per company and product, and global service pauses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, literal_column, select
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.dialect import upsert
from app.store.errors import InvalidRecord
from app.store.models import CallLeaseRow, CaptureStateRow, ServicePauseRow
from app.store.prepared import Prepared
from app.store.records import CaptureState, Environment, Product, ServicePause
from app.store.types import BulkInsert, UtcDateTime, utc_text

_STATE_FIELDS = tuple(f.name for f in fields(CaptureState) if f.name not in ("company_id", "product"))
# Prepared once: every lot saves the cursor, and building and compiling the upsert per call cost
# a millisecond or two per lot. Values go in the driver's form: instants through ``utc_text``.
_UPSERT_STATE = BulkInsert(CaptureStateRow, omit=("id",), upsert_on=("company_id", "product"))
_UPSERT_LEASE = BulkInsert(CallLeaseRow, upsert_on=("product",))
_GET_LEASE = Prepared(select(CallLeaseRow.answers_by).where(CallLeaseRow.product == bindparam("product")))
_DELETE_LEASE = Prepared(delete(CallLeaseRow).where(CallLeaseRow.product == bindparam("product")))
_INSTANTS = frozenset(c.key for c in CaptureStateRow.__table__.columns if isinstance(c.type, UtcDateTime))


def _driver_value(name: str) -> Callable[[Any], Any]:
    return utc_text if name in _INSTANTS else (lambda value: value)


_STATE_VALUES = tuple((name, _driver_value(name)) for name in _STATE_FIELDS)


# The engines read a company's state and its environment's pause before every decision: both
# prepared once and read on one bare connection.
_GET_STATE = Prepared(
    select(*(getattr(CaptureStateRow, name) for name in _STATE_FIELDS)).where(
        CaptureStateRow.company_id == bindparam("company_id"), CaptureStateRow.product == bindparam("product")
    )
)
_GET_PAUSE = Prepared(
    select(ServicePauseRow.paused_until, ServicePauseRow.reason, ServicePauseRow.cstat).where(
        ServicePauseRow.product == bindparam("product"), ServicePauseRow.environment == bindparam("environment")
    )
)


_ONE = select(literal_column("1").label("one")).subquery()
_GET_STATE_AND_PAUSE = Prepared(
    select(
        CaptureStateRow.id.is_not(None),
        *(getattr(CaptureStateRow, name) for name in _STATE_FIELDS),
        ServicePauseRow.paused_until,
        ServicePauseRow.reason,
        ServicePauseRow.cstat,
    )
    .select_from(_ONE)
    .outerjoin(
        CaptureStateRow,
        (CaptureStateRow.company_id == bindparam("company_id")) & (CaptureStateRow.product == bindparam("product")),
    )
    .outerjoin(
        ServicePauseRow,
        (ServicePauseRow.product == bindparam("product")) & (ServicePauseRow.environment == bindparam("environment")),
    )
)


def _state(row: CaptureStateRow) -> CaptureState:
    values: dict[str, Any] = {name: getattr(row, name) for name in _STATE_FIELDS}
    return CaptureState(company_id=row.company_id, product=Product(row.product), **values)


class CaptureStateRepository:
    """Read and save ``CaptureState``; a company never queried has the default state (NSU 0)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, company_id: int, product: Product) -> CaptureState:
        with self._db.read_connection() as connection:
            return _read_state(connection, company_id, product)

    def get_with_pause(
        self, company_id: int, product: Product, environment: Environment
    ) -> tuple[CaptureState, ServicePause | None]:
        """The state and the global pause a decision needs: one statement (so one snapshot), run
        straight on a pooled driver connection (the engines read it before every decision).
        Take ``Database.state_marks.token`` before it to know later whether it still holds."""
        params = {"company_id": company_id, "product": product.value, "environment": environment.key}
        with self._db.driver_connection() as connection:
            row = _GET_STATE_AND_PAUSE.first_on_driver(connection, params)
        assert row is not None  # the outer one-row select always yields a row
        fields_count = len(_STATE_FIELDS)
        state_row, pause_row = row[: fields_count + 1], row[fields_count + 1 :]
        state = CaptureState(company_id, product, *state_row[1:]) if state_row[0] else CaptureState(company_id, product)
        pause = ServicePause(product, environment, *pause_row) if pause_row[0] is not None else None
        return state, pause

    def save(self, state: CaptureState) -> CaptureState:
        """Insert or replace the whole state (engines build it with ``dataclasses.replace``)."""
        if state.ult_nsu < 0 or state.max_nsu < 0:
            raise InvalidRecord(f"NSU negativo no estado de captura: {state.ult_nsu}/{state.max_nsu}.")
        with self._db.write_driver() as driver:
            _UPSERT_STATE.run_one(driver, _state_values(state, self._db.clock.now()))
        self._db.state_marks.mark((state.company_id,))
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
        statement = upsert(ServicePauseRow, self._db.dialect).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=["product", "environment"],
            set_={"paused_until": paused_until, "reason": reason, "cstat": cstat},
        )
        with self._db.session() as s:
            s.execute(statement)
        self._db.state_marks.mark_all()
        return ServicePause(product, environment, paused_until, reason, cstat)

    def get_pause(self, product: Product, environment: Environment) -> ServicePause | None:
        with self._db.read_connection() as connection:
            return _read_pause(connection, product, environment)

    def clear_pause(self, product: Product, environment: Environment) -> None:
        with self._db.session() as s:
            s.execute(
                delete(ServicePauseRow).where(
                    ServicePauseRow.product == product.value,
                    ServicePauseRow.environment == environment.key,
                )
            )
        self._db.state_marks.mark_all()

    # ------------------------------------------------------------------ call leases

    def hold_answers_until(self, product: Product, answers_by: datetime) -> None:
        """Commit that answers to ``product``'s calls may come until ``answers_by`` (before a call
        whose answer could come later; see ``CallLeaseRow``)."""
        with self._db.write_driver() as driver:
            _UPSERT_LEASE.run_one(driver, {"product": product.value, "answers_by": utc_text(answers_by)})

    def answers_lease(self, product: Product) -> datetime | None:
        """Until when a previous process could have been waiting for answers (None: it stopped cleanly)."""
        with self._db.driver_connection() as connection:
            row = _GET_LEASE.first_on_driver(connection, {"product": product.value})
        return None if row is None else row[0]  # Prepared reads instants as aware datetimes

    def release_answers_lease(self, product: Product) -> None:
        """No call of ``product`` is in flight any more (a clean stop)."""
        with self._db.write_driver() as driver:
            release_lease_in(driver, product)


def release_lease_in(connection: Any, product: Product) -> None:
    _DELETE_LEASE.run(connection, {"product": product.value})


def _read_state(connection: Connection, company_id: int, product: Product) -> CaptureState:
    row = _GET_STATE.first(connection, {"company_id": company_id, "product": product.value})
    if row is None:
        return CaptureState(company_id, product)
    return CaptureState(company_id, product, *row)


def _read_pause(connection: Connection, product: Product, environment: Environment) -> ServicePause | None:
    row = _GET_PAUSE.first(connection, {"product": product.value, "environment": environment.key})
    return ServicePause(product, environment, *row) if row is not None else None


def save_state_in(target: Session | Connection, state: CaptureState, now: datetime) -> None:
    """Upsert ``state`` inside an open write transaction (so a batch and its cursor commit together)."""
    connection = target.connection() if isinstance(target, Session) else target
    _UPSERT_STATE.run_one(connection, _state_values(state, now))


def _state_values(state: CaptureState, now: datetime) -> dict[str, Any]:
    values: dict[str, Any] = {name: to_driver(getattr(state, name)) for name, to_driver in _STATE_VALUES}
    values["company_id"] = state.company_id
    values["product"] = state.product.value
    values["updated_at"] = utc_text(now)
    return values
