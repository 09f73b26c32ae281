"""Background runs: one row per job run with its trigger, status and reason (vorta's job table)."""

from __future__ import annotations

from sqlalchemy import select, update

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import RunRow
from app.store.records import Product, Run, RunStatus


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
        row = RunRow(
            job_type=job_type,
            trigger=trigger,
            status=RunStatus.RUNNING.value,
            company_id=company_id,
            product=product.value if product else None,
            reason=reason,
            started_at=self._db.clock.now(),
        )
        with self._db.session() as s:
            s.add(row)
            s.flush()
            return row.id

    def finish(self, run_id: int, status: RunStatus, reason: str | None = None) -> Run:
        if status is RunStatus.RUNNING:
            raise InvalidRecord("Uma execução não pode terminar com situação 'running'.")
        with self._db.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise UnknownRun(f"Execução não encontrada (id {run_id}).")
            row.status = status.value
            row.finished_at = self._db.clock.now()
            if reason is not None:
                row.reason = reason
            return _run(row)

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
                .values(
                    status=RunStatus.INTERRUPTED.value, finished_at=self._db.clock.now(), reason=reason
                )
            )
            return int(getattr(result, "rowcount", 0) or 0)
