"""``drive``: the service's jobs on a virtual clock, with the sandbox's referee as judge."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.capture.nfe import NfeCapture
from app.capture.service import CaptureService
from app.capture.simulation import Simulation, _Job, drive, run_pending
from app.core.clock import BRASILIA
from app.core.products import Product
from tests.support.fleet import SUPPLIER, Fleet, fleet


@pytest.fixture
def office_fleet(tmp_path: Path) -> Iterator[Fleet]:
    with fleet(tmp_path, 3) as f:
        yield f


def _publications(f: Fleet, start: datetime, hours: int, seed: int) -> list[tuple[datetime, Callable[[], object]]]:
    rng = random.Random(seed)
    timeline: list[tuple[datetime, Callable[[], object]]] = []
    for company in f.companies:
        for _ in range(rng.randint(3, 8)):
            at = start + timedelta(seconds=rng.randint(0, hours * 3600))
            timeline.append((at, lambda cnpj=company.cnpj.value: f.sandbox.publish_nfe(SUPPLIER, cnpj)))
    return timeline


def test_a_day_delivers_everything_once_within_61_minutes(office_fleet: Fleet) -> None:
    f = office_fleet
    start = f.clock.now()
    service = CaptureService(f.ctx, workers=1)
    timeline = _publications(f, start, 24, seed=5)
    # Published 5 s after the first query: the worst case, a full wait away.
    timeline.append((start + timedelta(seconds=5), lambda: f.sandbox.publish_nfe(SUPPLIER, f.companies[0].cnpj.value)))
    stats = drive(service, f.fake_clock, start + timedelta(hours=26), timeline=timeline)

    assert f.clock.now() == start + timedelta(hours=26)
    report = f.sandbox.referee.report()
    assert report["violations"] == []
    published = 0
    for company in f.companies:
        product = report["companies"][company.cnpj.value]["nfe"]
        nsus = sorted(p["nsu"] for p in product["published"])
        published += len(nsus)
        assert product["undelivered"] == []
        assert f.ctx.items.received(company.id, Product.NFE, 1, nsus[-1]) == nsus  # each NSU once
        assert max(product["latency_seconds"].values()) <= 61 * 60  # the wake-up pass is on time
        assert {d["count"] for d in product["delivered"].values()} == {1}
    assert stats.documents == published
    assert stats.events == published
    # Each company is asked about once an hour, never more.
    assert all(f.requests(c) <= 27 for c in f.companies)
    # The 23:00 gap check (Brasília) ran once in those 26 hours.
    assert [r.job_type for r in f.ctx.runs.recent(500)].count("verificacao_diaria") == 1


def test_ticks_follow_the_scheduler_and_an_idle_hour_costs_few_steps(office_fleet: Fleet) -> None:
    f = office_fleet
    service = CaptureService(f.ctx, workers=1)
    start = f.clock.now()
    first = drive(service, f.fake_clock, start + timedelta(hours=1))
    assert first.queries == 3  # one each, then every company waits its hour
    stats = drive(service, f.fake_clock, start + timedelta(hours=7), max_step=None)
    assert stats.queries == 3 * 6
    assert stats.steps <= 6 * 3  # jumps from one due time to the next, not every cycle
    assert f.sandbox.referee.report()["violations"] == []
    times = [r.at for r in f.sandbox.referee.requests if r.service == "nfe_dist"]
    gaps = [b - a for a, b in zip(times[::3], times[3::3], strict=False)]
    assert all(timedelta(hours=1) < g <= timedelta(hours=1, minutes=1) for g in gaps)


def test_daily_routines_run_on_the_virtual_clock(office_fleet: Fleet) -> None:
    f = office_fleet
    service = CaptureService(f.ctx, workers=1)
    start = f.clock.now()
    drive(service, f.fake_clock, start + timedelta(days=1, minutes=1))
    jobs = [r for r in f.ctx.runs.recent(1000) if r.job_type in ("verificacao_diaria", "retencao")]
    checks = [r.started_at.astimezone(BRASILIA) for r in jobs if r.job_type == "verificacao_diaria"]
    assert [(c.hour, c.minute) for c in checks] == [(23, 0)]
    assert sum(1 for r in jobs if r.job_type == "retencao") == 1  # 10 min after the start, as the scheduler
    assert all(r.status.value == "succeeded" for r in jobs)


def test_drive_accepts_a_product_capture_and_keeps_its_decisions(office_fleet: Fleet) -> None:
    f = office_fleet
    capture = NfeCapture(f.ctx)
    start = f.clock.now()
    f.sandbox.publish_nfe(SUPPLIER, f.companies[0].cnpj.value)
    stats = drive(capture, f.fake_clock, start + timedelta(hours=2, minutes=5))
    assert stats.documents == 1
    assert stats.queries == 3 * 3  # 12:00, 13:00:40, 14:01:20
    assert f.sandbox.referee.report()["violations"] == []


def test_a_timeline_event_just_before_a_wait_ends_does_not_delay_the_wake_up(office_fleet: Fleet) -> None:
    # Anything happening in the sandbox forces every job to look at its next tick; the
    # distribution's wake-up at the end of the hour must still come first (it once slipped to
    # the next 3-minute tick: 62-63 min latency).
    f = office_fleet
    start = f.clock.now()
    service = CaptureService(f.ctx, workers=1)
    first = f.companies[0].cnpj.value
    timeline: list[tuple[datetime, Callable[[], object]]] = [
        (start + timedelta(seconds=5), lambda: f.sandbox.publish_nfe(SUPPLIER, first)),
        (start + timedelta(hours=1, seconds=20), lambda: None),
    ]
    drive(service, f.fake_clock, start + timedelta(hours=2), timeline=timeline)
    product = f.sandbox.referee.report()["companies"][first]["nfe"]
    [latency] = product["latency_seconds"].values()
    # Asked at dhResp + 1 h + 40 s (the safety margin), not at whatever tick came next.
    assert latency == 60 * 60 + 40 - 5


def test_a_forced_job_still_wakes_at_its_exact_due_time() -> None:
    # The month benchmark found it: a publication forced every job to its next tick, and the
    # distribution's wake-up 80 s before that tick was skipped (62-min latencies).
    origin = datetime(2026, 11, 3, 18, 0, tzinfo=BRASILIA)
    job = _Job("distribution-nfe", timedelta(minutes=3), origin + timedelta(minutes=30), lambda: None, lambda: None)
    job.exact = True
    job.forced = True
    now = origin + timedelta(minutes=28)
    due = now + timedelta(seconds=40)
    assert job.wake(origin, now, due) == due
    assert job.wake(origin, now, None) == job.next_tick  # nothing due: the tick
    job.exact = False
    assert job.wake(origin, now, due) == job.next_tick


def _job_rows(f: Fleet) -> list[str]:
    return sorted(r.job_type for r in f.ctx.runs.recent(1000) if r.company_id is None)


def test_run_pending_is_the_job_tables_first_instant_and_moves_no_clock(office_fleet: Fleet) -> None:
    f = office_fleet
    start = f.clock.now()
    service = CaptureService(f.ctx, workers=1)
    stats = run_pending(service)
    assert stats.queries == 3 and stats.passes == len(service.captures)  # every product's pass, once
    assert f.clock.now() == start
    # The dispatches ran (each with its row); the 23:00 check and the retention wait for their time.
    assert _job_rows(f) == ["manifestacoes", "recuperacoes"]
    assert run_pending(service).queries == 0  # every company now waits its hour


def test_a_simulation_runs_no_job_twice_at_one_instant_and_looks_again_when_told(office_fleet: Fleet) -> None:
    f = office_fleet
    simulation = Simulation(CaptureService(f.ctx, workers=1))
    simulation.run_pending()
    assert _job_rows(f) == ["manifestacoes", "recuperacoes"]
    simulation.run_pending()
    assert _job_rows(f) == ["manifestacoes", "recuperacoes"]  # same instant: nothing again
    f.fake_clock.advance(timedelta(minutes=1))
    simulation.run_pending()
    assert _job_rows(f) == ["manifestacoes", "recuperacoes"]  # its tick came, nothing was due
    simulation.changed()  # something outside the jobs happened: each runs at its next tick
    wake = simulation.run_pending()
    assert wake is not None and f.clock.now() < wake <= f.clock.now() + timedelta(minutes=1)
    f.fake_clock.advance(timedelta(minutes=1))  # the manifestations' next tick (every 60 s)
    simulation.run_pending()
    assert _job_rows(f) == ["manifestacoes", "manifestacoes", "recuperacoes"]  # recoveries: every 5 min
