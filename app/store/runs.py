"""Background runs: one row per job run with its trigger, status and reason (vorta's job table)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, bindparam, func, insert, select, update

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import RunRow
from app.store.prepared import Prepared
from app.store.records import Product, Run, RunStatus
from app.store.types import utc_text

# Every company run writes its row twice (started, finished): prepared once, no ORM session.
_COLUMNS = ("job_type", "trigger", "status", "company_id", "product", "reason", "started_at")
_INSERT = Prepared(insert(RunRow).values({name: bindparam(name) for name in _COLUMNS}))
# A run whose first answer also ends it (most company runs: one distNSU, then the hour's wait).
_INSERT_DONE = Prepared(insert(RunRow).values({name: bindparam(name) for name in (*_COLUMNS, "finished_at")}))
_FINISH = Prepared(
    update(RunRow)
    .where(RunRow.id == bindparam("run_id"))
    .values(
        status=bindparam("status"),
        finished_at=bindparam("finished_at"),
        reason=func.coalesce(bindparam("reason"), RunRow.reason),
    )
)
_GET = Prepared(
    select(
        RunRow.id,
        RunRow.job_type,
        RunRow.trigger,
        RunRow.status,
        RunRow.company_id,
        RunRow.product,
        RunRow.reason,
        RunRow.started_at,
        RunRow.finished_at,
    ).where(RunRow.id == bindparam("run_id"))
)


class UnknownRun(InvalidRecord, LookupError):
    """No run with that id."""


def _run(row: RunRow) -> Run:
    return Run(
        id=row.id,
        job_type=row.job_type,
        trigger=row.trigger,
        status=RunStatus(row.status),
        company_id=row.company_id,
        product=Product(row.product) if row.product else None,
        reason=row.reason,
        started_at=row.started_at,
        finished_at=row.finished_at,
    )


def start_run_in(
    connection: Connection,
    job_type: str,
    trigger: str,
    now: datetime,
    *,
    company_id: int | None = None,
    product: Product | None = None,
    reason: str | None = None,
    finished: tuple[RunStatus, datetime] | None = None,
) -> int:
    """``RunRepository.start`` inside an open write transaction; returns the run's id.

    ``finished`` (status, when) writes a run that already ended: one INSERT instead of an
    INSERT and the UPDATE of ``finish_run_in``, for a run whose first answer is its last.
    """
    values = {
        "job_type": job_type,
        "trigger": trigger,
        "status": RunStatus.RUNNING.value,
        "company_id": company_id,
        "product": product.value if product else None,
        "reason": reason,
        "started_at": utc_text(now),
    }
    if finished is None:
        return _INSERT.run(connection, values)
    status, finished_at = finished
    if status is RunStatus.RUNNING:
        raise InvalidRecord("Uma execução não pode terminar com situação 'running'.")
    values["status"] = status.value
    values["finished_at"] = utc_text(finished_at)
    return _INSERT_DONE.run(connection, values)


def finish_run_in(connection: Connection, run_id: int, status: RunStatus, now: datetime, reason: str | None) -> None:
    """Close a run inside an open write transaction (its reason kept when ``reason`` is None)."""
    if status is RunStatus.RUNNING:
        raise InvalidRecord("Uma execução não pode terminar com situação 'running'.")
    values = {"run_id": run_id, "status": status.value, "finished_at": utc_text(now), "reason": reason}
    _FINISH.run(connection, values)


class RunRepository:
    """Start, finish and list runs."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def start(
        self,
        job_type: str,
        trigger: str,
        *,
        company_id: int | None = None,
        product: Product | None = None,
        reason: str | None = None,
    ) -> int:
        with self._db.write_driver() as driver:
            return start_run_in(
                driver,
                job_type,
                trigger,
                self._db.clock.now(),
                company_id=company_id,
                product=product,
                reason=reason,
            )

    def finish(self, run_id: int, status: RunStatus, reason: str | None = None) -> Run:
        with self._db.write_driver() as driver:
            finish_run_in(driver, run_id, status, self._db.clock.now(), reason)
            row = _GET.first_on_driver(driver, {"run_id": run_id})
        if row is None:
            raise UnknownRun(f"Execução não encontrada (id {run_id}).")
        run_id, job_type, trigger, status_text, company_id, product, reason, started_at, finished_at = row
        return Run(
            id=run_id,
            job_type=job_type,
            trigger=trigger,
            status=RunStatus(status_text),
            company_id=company_id,
            product=Product(product) if product else None,
            reason=reason,
            started_at=started_at,
            finished_at=finished_at,
        )

    def get(self, run_id: int) -> Run:
        with self._db.reader() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise UnknownRun(f"Execução não encontrada (id {run_id}).")
            return _run(row)

    def recent(self, limit: int = 100, *, status: RunStatus | None = None) -> list[Run]:
        query = select(RunRow).order_by(RunRow.started_at.desc(), RunRow.id.desc()).limit(limit)
        if status is not None:
            query = query.where(RunRow.status == status.value)
        with self._db.reader() as s:
            return [_run(r) for r in s.scalars(query)]

    def mark_interrupted(self, reason: str = "O programa foi encerrado durante a execução.") -> int:
        """At start-up: runs left 'running' by a previous process become 'interrupted'."""
        with self._db.session() as s:
            result = s.execute(
                update(RunRow)
                .where(RunRow.status == RunStatus.RUNNING.value)
                .values(status=RunStatus.INTERRUPTED.value, finished_at=self._db.clock.now(), reason=reason)
            )
            return int(getattr(result, "rowcount", 0) or 0)
