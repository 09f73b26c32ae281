"""``DistributionEngine``: planning, the run loop and one transaction per answer, on the NF-e adapter
against the sandbox over mutual TLS, in a real SQLite data folder."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from app.capture.engine.distribution import RECHECK_DISABLED, DistributionEngine
from app.capture.nfe.adapter import NfeAdapter
from app.core.cadence import Action, CaptureState
from app.core.products import Product
from app.store.errors import StorageUnavailable
from app.store.records import RunStatus
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness

PRODUCT = Product.NFE


@dataclass(frozen=True, slots=True)
class FailingDisk(NfeAdapter):
    """The NF-e adapter whose lot writes fail at its ``fail_at``-th lot: a fault."""

    fail_at: int = 1
    lots: list[int] = field(default_factory=list)

    def within_lot(self, *lot: Any) -> None:
        self.lots.append(len(self.lots) + 1)
        if len(self.lots) == self.fail_at:
            raise OSError("disco cheio")
        NfeAdapter.within_lot(self, *lot)


def _engine(harness: Harness) -> DistributionEngine:
    return DistributionEngine(harness.ctx, NfeAdapter(harness.ctx))


def _publish(harness: Harness, count: int) -> None:
    for _ in range(count):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)


def _state(harness: Harness) -> CaptureState:
    return harness.ctx.cursors.get(harness.company.id, PRODUCT)


def _runs(harness: Harness) -> list[tuple[str, RunStatus]]:
    return [(r.job_type, r.status) for r in reversed(harness.ctx.runs.recent(50)) if r.company_id is not None]


def _asked(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_dist")


def test_a_new_company_is_due_and_after_its_run_planned_for_the_hour(harness: Harness) -> None:
    engine = _engine(harness)
    now = harness.clock.now()
    assert [c.id for c in engine.due(now)] == [harness.company.id]
    result = engine.run_company(harness.company.id)
    assert (result.queries, result.documents) == (1, 0)  # 137: nothing yet
    assert result.decision.action is Action.WAIT and result.decision.until is not None
    assert engine.planned_next() == result.decision.until == _state(harness).next_query_at
    assert engine.due(harness.clock.now()) == []  # waiting: no look, no call
    assert engine.next_due_at(harness.clock.now()) == result.decision.until
    assert _runs(harness) == [("nfe_distribution", RunStatus.SUCCEEDED)]
    assert _asked(harness) == 1


def test_a_backlog_chains_its_lots_up_to_the_run_limit_and_the_next_run_goes_on(harness: Harness) -> None:
    _publish(harness, 120)
    engine = _engine(harness)
    engine.max_lots = 2
    first = engine.run_company(harness.company.id)
    assert (first.queries, first.documents) == (2, 100)  # 50 + 50, then it yields to the others
    assert _state(harness).ult_nsu == 100 and first.decision.query  # more to ask, due at once
    assert [c.id for c in engine.due(harness.clock.now())] == [harness.company.id]
    second = engine.run_company(harness.company.id)
    assert (second.queries, second.documents) == (1, 20)
    assert harness.ctx.items.received(harness.company.id, PRODUCT, 1, 120) == list(range(1, 121))
    assert _runs(harness) == [("nfe_distribution", RunStatus.SUCCEEDED)] * 2  # one row per run
    assert harness.sandbox.referee.violations() == []


def test_a_stop_asked_between_lots_ends_the_run_with_the_lot_committed(harness: Harness) -> None:
    _publish(harness, 80)
    engine = _engine(harness)
    beats: list[int] = []

    def stop_after_first(company_id: int) -> bool:
        beats.append(company_id)
        return False

    engine.lot_done = stop_after_first
    result = engine.run_company(harness.company.id)
    assert beats == [harness.company.id] and result.queries == 1
    assert _state(harness).ult_nsu == 50 and len(harness.ctx.items.received(harness.company.id, PRODUCT, 1, 80)) == 50
    assert _runs(harness) == [("nfe_distribution", RunStatus.SUCCEEDED)]


def test_a_failure_inside_the_first_lots_transaction_stores_nothing_and_moves_no_cursor(harness: Harness) -> None:
    _publish(harness, 3)
    engine = DistributionEngine(harness.ctx, FailingDisk(harness.ctx, fail_at=1))
    with pytest.raises(StorageUnavailable, match="disco cheio"):  # the store names the disk's fault
        engine.run_company(harness.company.id)
    assert _state(harness).ult_nsu == 0
    assert harness.ctx.items.received(harness.company.id, PRODUCT, 1, 3) == []
    assert _runs(harness) == []  # the run row comes with its first committed answer


def test_a_failure_in_a_later_lot_keeps_the_earlier_lots_and_fails_the_run(harness: Harness) -> None:
    _publish(harness, 60)
    engine = DistributionEngine(harness.ctx, FailingDisk(harness.ctx, fail_at=2))
    with pytest.raises(StorageUnavailable):
        engine.run_company(harness.company.id)
    assert _state(harness).ult_nsu == 50  # the first lot and its cursor, together
    assert len(harness.ctx.items.received(harness.company.id, PRODUCT, 1, 60)) == 50
    [run] = [r for r in harness.ctx.runs.recent(10) if r.company_id == harness.company.id]
    assert run.status is RunStatus.FAILED and "disco cheio" in (run.reason or "")


def test_a_second_run_of_the_cnpj_is_skipped_while_one_holds_it(harness: Harness) -> None:
    engine = _engine(harness)
    lock = engine.locks.for_cnpj(harness.company.cnpj.value)
    assert lock.acquire(blocking=False)
    try:
        result = engine.run_company(harness.company.id)
    finally:
        lock.release()
    assert result.skipped and result.queries == 0 and "andamento" in result.decision.reason
    assert _asked(harness) == 0


def test_a_disabled_company_is_never_asked_and_looked_at_again_hourly(harness: Harness) -> None:
    harness.settings(enabled=False)
    engine = _engine(harness)
    now = harness.clock.now()
    assert engine.due(now) == []
    result = engine.run_company(harness.company.id, trigger="manual")
    assert result.decision.action is Action.DISABLED and result.queries == 0
    assert engine.planned_next() == now + RECHECK_DISABLED
    assert _asked(harness) == 0


def test_replan_forgets_a_plan_and_the_next_look_reads_the_state_again(harness: Harness) -> None:
    engine = _engine(harness)
    engine.run_company(harness.company.id)
    planned = engine.planned_next()
    assert planned is not None
    engine.replan(harness.company.id)
    assert engine.planned_next() is None
    # Someone resumed it early (the state's wait cleared): the fresh look sees it due.
    harness.ctx.cursors.save(replace(_state(harness), next_query_at=None, wait_reason=None))
    engine.replan(harness.company.id)
    assert [c.id for c in engine.due(harness.clock.now())] == [harness.company.id]


def test_a_clean_stop_releases_the_lease_and_a_restart_takes_up_a_dead_ones(harness: Harness) -> None:
    _publish(harness, 120)
    engine = _engine(harness)
    engine.max_lots = 1
    engine.run_company(harness.company.id)  # a lot of 50, more remains: the lease stays while running
    assert harness.ctx.cursors.answers_lease(PRODUCT) is not None
    engine.release_lease()
    assert harness.ctx.cursors.answers_lease(PRODUCT) is None
    engine.lease.cover()  # calls again... and the process dies
    restarted = _engine(harness)
    assert restarted.recover_lost_answers() == 0  # a backlog beyond a lot: its queue cannot have ended
    assert harness.ctx.cursors.answers_lease(PRODUCT) is None  # taken up and released
    assert [c.id for c in restarted.due(harness.clock.now())] == [harness.company.id]
