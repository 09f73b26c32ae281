"""CaptureService on the real scheduler: start/stop, graceful stop, the watchdog, clock jumps.

APScheduler runs on real time, so these use short real intervals (0.1 s passes) and wait on
conditions with deadlines; the engines and the sandbox share a FakeClock the test moves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.context import CaptureNotice
from app.capture.service import CaptureService, ServiceError, ServiceIntervals
from app.capture.status import CONSULTANDO, EM_ESPERA
from app.core.products import Product
from app.store.records import ManifestationStatus, RunStatus
from tests.conftest import wait_until
from tests.support.fleet import SUPPLIER, Fleet, fleet

FAST = ServiceIntervals(
    distribution={Product.NFE: timedelta(seconds=0.1)},
    manifestation=timedelta(seconds=0.2),
    recovery=timedelta(seconds=0.2),
    watchdog=timedelta(seconds=0.1),
    jump_tolerance=timedelta(seconds=2),
)


@pytest.fixture
def office_fleet(tmp_path: Path) -> Iterator[Fleet]:
    with fleet(tmp_path, 3) as f:
        yield f


@pytest.fixture
def notices(office_fleet: Fleet) -> list[CaptureNotice]:
    received: list[CaptureNotice] = []
    office_fleet.ctx.listeners.append(received.append)
    return received


def _running_rows(f: Fleet) -> list[object]:
    return f.ctx.runs.recent(status=RunStatus.RUNNING)


def test_start_queries_every_company_once_and_stop_is_prompt(office_fleet: Fleet) -> None:
    f = office_fleet
    service = CaptureService(f.ctx, intervals=FAST)
    service.start()
    try:
        with pytest.raises(ServiceError):
            service.start()
        wait_until(lambda: all(f.requests(c) == 1 for c in f.companies) and not service.flights, timeout=10)
        passes = service.passes[Product.NFE]
        wait_until(lambda: service.passes[Product.NFE] >= passes + 5, timeout=10)
        assert [f.requests(c) for c in f.companies] == [1, 1, 1]  # each now waits its hour
        assert {s.label for s in service.status()} == {EM_ESPERA}
    finally:
        assert service.stop(timeout=5)
    assert not service.running
    assert _running_rows(f) == []
    assert f.sandbox.referee.report()["violations"] == []


def test_graceful_stop_finishes_the_lot_in_flight_and_keeps_its_cursor(office_fleet: Fleet) -> None:
    f = office_fleet
    busy = f.companies[0]
    for i in range(70):  # two lots: 50 + 20
        f.sandbox.publish_nfe(SUPPLIER, busy.cnpj.value, at=f.clock.now() - timedelta(days=2, minutes=i))
    gate = f.gate(busy)
    # One worker: the two other companies wait in its queue and are dropped by the stop.
    service = CaptureService(f.ctx, workers=1, intervals=FAST)
    service.start()
    assert gate.entered.wait(10)  # the first lot's call is in flight
    stopping = threading.Thread(target=lambda: results.append(service.stop(timeout=10)))
    results: list[bool] = []
    stopping.start()
    wait_until(lambda: not service.running, timeout=5)  # stop() has begun and is waiting
    assert not results
    gate.open()
    stopping.join(10)
    assert results == [True]  # in time: the dropped runs are not waited for
    assert [f.requests(c) for c in f.companies[1:]] == [0, 0]

    state = f.ctx.cursors.get(busy.id, Product.NFE)
    assert state.ult_nsu == 50  # the lot in flight landed with its cursor; no second lot was started
    assert len(f.ctx.items.received(busy.id, Product.NFE, 1, 70)) == 50
    [run] = [r for r in f.ctx.runs.recent() if r.company_id == busy.id]
    assert run.status is RunStatus.SUCCEEDED
    assert _running_rows(f) == []

    # The next start continues from NSU 50.
    gate.calls = 0
    f.gates.clear()
    again = CaptureService(f.ctx, intervals=FAST)
    again.start()
    try:
        wait_until(lambda: f.ctx.cursors.get(busy.id, Product.NFE).ult_nsu == 70, timeout=10)
    finally:
        assert again.stop(timeout=5)
    assert f.sandbox.referee.report()["violations"] == []


def test_watchdog_abandons_a_stalled_run_and_the_others_continue(
    office_fleet: Fleet, notices: list[CaptureNotice]
) -> None:
    f = office_fleet
    stuck, *others = f.companies
    gate = f.gate(stuck)
    # One worker: the stalled run holds it, so the others run only if the watchdog replaces the pool.
    service = CaptureService(f.ctx, workers=1, intervals=replace(FAST, stall_after=timedelta(seconds=0.3)))
    service.start()
    try:
        assert gate.entered.wait(10)
        wait_until(lambda: all(f.requests(c) == 1 for c in others), timeout=10)
        [status] = service.status(company_id=stuck.id)
        assert status.label == CONSULTANDO and status.stalled
        assert "travada" in status.reason and "quando a chamada travada terminar" in status.reason
        # >= 1: on a loaded machine another company's short call may also outlast the 0.3 s here.
        assert service.stalls >= 1
        [row] = [r for r in f.ctx.runs.recent() if r.trigger == "watchdog" and r.company_id == stuck.id]
        assert row.status is RunStatus.FAILED and "travada" in (row.reason or "")
        assert any(n.kind == "alert" and n.company_id == stuck.id and "travada" in n.message for n in notices)
        assert f.requests(stuck) == 0  # its call never reached the service; it is not asked twice
    finally:
        gate.open()
        assert service.stop(timeout=5)
    assert f.requests(stuck) == 1
    assert f.sandbox.referee.report()["violations"] == []


def test_a_clock_jump_replans_without_a_burst(office_fleet: Fleet, notices: list[CaptureNotice]) -> None:
    f = office_fleet
    service = CaptureService(f.ctx, intervals=FAST)
    service.start()
    try:
        wait_until(lambda: all(f.requests(c) == 1 for c in f.companies) and not service.flights, timeout=10)
        # The machine sleeps for three hours: missed passes and waits that ended long ago.
        f.fake_clock.advance(timedelta(hours=3))
        wait_until(lambda: service.clock_jumps >= 1, timeout=10)
        wait_until(lambda: all(f.requests(c) == 2 for c in f.companies), timeout=10)
        passes = service.passes[Product.NFE]
        wait_until(lambda: service.passes[Product.NFE] >= passes + 10, timeout=10)
        # One query per company after the wake-up, not one per missed hour or missed pass.
        assert [f.requests(c) for c in f.companies] == [2, 2, 2]
        assert any(n.kind == "status" and "saltou" in n.message for n in notices)
    finally:
        assert service.stop(timeout=5)
    assert f.sandbox.referee.report()["violations"] == []


def test_stop_waits_for_a_manifestation_in_flight_but_not_for_queued_routines(office_fleet: Fleet) -> None:
    f = office_fleet
    company = f.companies[0]
    nfe = f.sandbox.publish_nfe(SUPPLIER, company.cnpj.value)
    service = CaptureService(f.ctx, intervals=FAST)
    service.run_once(company_id=company.id)  # the resNFe arrives; the company then waits its hour
    capture = service.captures[Product.NFE]
    capture.manifestation.request(company.id, str(nfe.key), "210210")
    gate = f.gate(company)
    service.start()
    assert gate.entered.wait(10)  # the Ciência is on the wire; the next routine waits in the queue
    results: list[bool] = []
    stopping = threading.Thread(target=lambda: results.append(service.stop(timeout=5)))
    stopping.start()
    wait_until(lambda: not service.running, timeout=5)
    gate.open()
    stopping.join(10)
    assert results == [True]
    [request] = f.ctx.manifestations.for_key(company.id, Product.NFE, str(nfe.key))
    assert request.status is ManifestationStatus.ACCEPTED
    assert f.sandbox.referee.report()["violations"] == []


def test_a_run_over_a_blocked_company_shows_the_block_and_until_when(office_fleet: Fleet) -> None:
    """A run queued for a company the service blocked (or still storing the 656 answer that
    earned the block) sends nothing: the status says "Bloqueada até ...", never "Consultando"
    without a time (the demo window's dashboard caught that moment under load)."""
    from app.capture.status import BLOQUEADA
    from app.capture.watchdog import Flight
    from app.core.cadence import Action

    f = office_fleet
    blocked = f.companies[0]
    until = f.clock.now() + timedelta(hours=1)
    state = f.ctx.cursors.get(blocked.id, Product.NFE)
    f.ctx.cursors.save(replace(state, blocked_until=until, last_cstat="656", last_message="Consumo indevido"))
    service = CaptureService(f.ctx, intervals=FAST)
    assert service.flights.claim(Flight(Product.NFE, blocked.id, f.clock.now(), 30.0))
    [status] = service.status(company_id=blocked.id)
    assert status.action is Action.BLOCKED and status.label == BLOQUEADA
    assert status.until == until and not status.capturing
    other = f.companies[1]
    assert service.flights.claim(Flight(Product.NFE, other.id, f.clock.now(), 30.0))
    [querying] = service.status(company_id=other.id)
    assert querying.label == CONSULTANDO and querying.capturing and querying.until is None
