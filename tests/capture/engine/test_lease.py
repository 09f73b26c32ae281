"""``CallLease``: the committed row that says until when this process may still get answers."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from app.capture.engine.lease import LEASE_EXTENSION, CallLease
from app.core.cadence import rules_for
from app.core.products import Product
from tests.support.nfe_harness import Harness

PRODUCT = Product.NFE


def _latest_answer(harness: Harness) -> timedelta:
    return timedelta(seconds=harness.ctx.settings.call_timeouts.for_product(PRODUCT))


def test_a_call_is_covered_to_its_latest_answer_plus_the_extension_committed_once(harness: Harness) -> None:
    lease = CallLease(harness.ctx, PRODUCT)
    start = harness.clock.now()
    assert harness.ctx.cursors.answers_lease(PRODUCT) is None
    lease.cover()
    first = start + _latest_answer(harness) + LEASE_EXTENSION
    assert harness.ctx.cursors.answers_lease(PRODUCT) == first
    harness.clock.advance(LEASE_EXTENSION - timedelta(seconds=1))
    lease.cover()  # the committed lease still reaches this call's answer: no write
    assert harness.ctx.cursors.answers_lease(PRODUCT) == first
    harness.clock.advance(timedelta(seconds=2))
    lease.cover()
    assert harness.ctx.cursors.answers_lease(PRODUCT) == harness.clock.now() + _latest_answer(harness) + LEASE_EXTENSION
    lease.release()
    assert harness.ctx.cursors.answers_lease(PRODUCT) is None


def test_each_product_holds_its_own_lease(harness: Harness) -> None:
    CallLease(harness.ctx, PRODUCT).cover()
    assert harness.ctx.cursors.answers_lease(Product.CTE) is None
    CallLease(harness.ctx, Product.CTE).release()  # a clean CT-e stop leaves NF-e's calls covered
    assert harness.ctx.cursors.answers_lease(PRODUCT) is not None


def test_after_a_death_holding_the_lease_every_company_that_could_be_asked_waits_the_hour(harness: Harness) -> None:
    rules = rules_for(PRODUCT)
    CallLease(harness.ctx, PRODUCT).cover()  # the process dies here, its call unanswered
    answers_by = harness.ctx.cursors.answers_lease(PRODUCT)
    assert answers_by is not None
    harness.clock.advance(timedelta(minutes=1))
    assert harness.ctx.cursors.list_states(PRODUCT) == []  # its first call, from NSU 0, may be the one lost
    waits = CallLease(harness.ctx, PRODUCT).recover(rules)  # the next start
    assert waits == 1
    state = harness.ctx.cursors.get(harness.company.id, PRODUCT)
    assert state.next_query_at == answers_by + rules.empty_queue_wait + rules.safety_margin
    assert state.ult_nsu == 0 and "encerrado" in (state.wait_reason or "")
    assert harness.ctx.cursors.answers_lease(PRODUCT) is None  # released with the waits
    assert CallLease(harness.ctx, PRODUCT).recover(rules) == 0  # nothing to recover twice


def test_a_company_with_a_backlog_or_a_longer_wait_keeps_its_state(harness: Harness) -> None:
    rules = rules_for(PRODUCT)
    state = harness.ctx.cursors.get(harness.company.id, PRODUCT)
    backlog = replace(state, ult_nsu=10, max_nsu=10 + rules.lot_size + 1)  # could not have ended its queue
    harness.ctx.cursors.save(backlog)
    CallLease(harness.ctx, PRODUCT).cover()
    assert CallLease(harness.ctx, PRODUCT).recover(rules) == 0
    after = harness.ctx.cursors.get(harness.company.id, PRODUCT)
    assert (after.ult_nsu, after.max_nsu, after.next_query_at) == (10, backlog.max_nsu, None)
