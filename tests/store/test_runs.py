from __future__ import annotations

import pytest

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.records import Company, Product, RunStatus
from app.store.runs import RunRepository, UnknownRun
from app.store.unit import write_unit


def test_start_and_finish_a_run(db: Database, company: Company, clock: FakeClock) -> None:
    runs = RunRepository(db)
    run_id = runs.start("distribution", "scheduled", company_id=company.id, product=Product.NFE)
    running = runs.get(run_id)
    assert running.status is RunStatus.RUNNING and running.finished_at is None
    clock.advance(42)
    done = runs.finish(run_id, RunStatus.SKIPPED, "empresa bloqueada até 14:05 (656)")
    assert done.status is RunStatus.SKIPPED and done.reason == "empresa bloqueada até 14:05 (656)"
    assert done.finished_at is not None and (done.finished_at - done.started_at).total_seconds() == 42
    assert runs.recent(status=RunStatus.SKIPPED) == [done]
    with pytest.raises(InvalidRecord):
        runs.finish(run_id, RunStatus.RUNNING)
    with pytest.raises(UnknownRun):
        runs.get(run_id + 100)


def test_runs_left_running_are_marked_interrupted_at_start_up(db: Database) -> None:
    runs = RunRepository(db)
    left = runs.start("gap_recovery", "daily")
    finished = runs.start("manifestation", "manual")
    runs.finish(finished, RunStatus.FAILED, "certificado vencido")
    assert runs.mark_interrupted() == 1
    assert runs.get(left).status is RunStatus.INTERRUPTED
    assert runs.get(finished).status is RunStatus.FAILED


def test_a_run_that_ends_with_its_first_answer_is_written_once_finished(
    db: Database, company: Company, clock: FakeClock
) -> None:
    started = clock.now()
    clock.advance(3)
    with write_unit(db) as unit:
        run_id = unit.start_run(
            "nfe_distribution",
            "scheduler",
            company_id=company.id,
            product=Product.NFE,
            at=started,
            finished=(RunStatus.SUCCEEDED, "1 consulta(s), 0 documento(s)."),
        )
    run = RunRepository(db).get(run_id)
    assert run.status is RunStatus.SUCCEEDED and run.reason == "1 consulta(s), 0 documento(s)."
    assert run.started_at == started and run.finished_at == clock.now()
    assert RunRepository(db).mark_interrupted() == 0
    with pytest.raises(InvalidRecord), write_unit(db) as unit:
        unit.start_run("x", "y", company_id=None, product=None, finished=(RunStatus.RUNNING, "?"))
