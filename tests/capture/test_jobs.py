"""One table of scheduled jobs for both drivers: the APScheduler service and the simulation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.jobs import Daily, Every, jobs_of
from app.capture.scheduler import BackgroundJobs, job_id
from app.capture.service import CaptureService
from app.capture.simulation import drive
from app.core.products import Product
from tests.support.fleet import Fleet, fleet


@pytest.fixture
def office_fleet(tmp_path: Path) -> Iterator[Fleet]:
    with fleet(tmp_path, 2) as f:
        yield f


def test_the_table_names_every_job_once_with_its_trigger(office_fleet: Fleet) -> None:
    service = CaptureService(office_fleet.ctx, workers=1)
    table = {job.name: job for job in jobs_of(service)}
    assert set(table) == {
        "distribuicao-nfe",
        "distribuicao-cte",
        "distribuicao-nfse",
        "manifestacoes",
        "recuperacoes",
        "verificacao-diaria",
        "retencao",
    }
    assert table["distribuicao-cte"].trigger == Every(timedelta(seconds=60))  # §5.2
    assert table["distribuicao-nfe"].trigger == Every(timedelta(minutes=3))  # §4.2
    assert table["distribuicao-nfse"].trigger == Every(timedelta(seconds=30))  # §6.2
    assert isinstance(table["verificacao-diaria"].trigger, Daily)
    assert table["distribuicao-cte"].product is Product.CTE


def test_the_scheduler_registers_the_tables_jobs(office_fleet: Fleet) -> None:
    service = CaptureService(office_fleet.ctx, workers=1)
    background = BackgroundJobs(service)
    background.start()
    try:
        registered = {job.id for job in background._scheduler.get_jobs()}
    finally:
        background.stop(5)
    expected = {job_id(p) for p in service.captures} | {j.name for j in jobs_of(service) if j.product is None}
    assert registered == expected | {"vigia"}


def test_every_routine_run_of_the_simulation_writes_a_run_row(office_fleet: Fleet) -> None:
    f = office_fleet
    service = CaptureService(f.ctx, workers=1)
    start = f.clock.now()
    f.sandbox.publish_nfe("99888777000100", f.companies[0].cnpj.value)
    drive(service, f.fake_clock, start + timedelta(hours=2))
    kinds = [r.job_type for r in f.ctx.runs.recent(1000)]
    assert kinds.count("manifestacoes") >= 1 and kinds.count("recuperacoes") >= 1
    assert kinds.count("retencao") == 1  # 10 minutes after the start, as the scheduler does
    assert all(r.status.value == "succeeded" for r in f.ctx.runs.recent(1000))
