from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.core.cadence import (
    CTE_RULES,
    MAX_GAP_NSUS,
    NFE_RULES,
    NFSE_RULES,
    SAFETY_MARGIN,
    Action,
    CaptureState,
    Decision,
    after_lost_answers,
    after_service_mark,
    certificate_unavailable,
    decide,
    display_time,
    point_queries_allowed,
    resume,
    rules_for,
    skipped_nsus,
)
from app.core.products import Product
from app.store import records

NOW = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília


def _decide(
    state: CaptureState,
    now: datetime = NOW,
    *,
    global_pause_until: datetime | None = None,
    certificate_problem: str | None = None,
    enabled: bool = True,
) -> Decision:
    return decide(
        state,
        NFE_RULES,
        now,
        global_pause_until=global_pause_until,
        certificate_problem=certificate_problem,
        enabled=enabled,
    )


def test_store_reexports_the_core_state() -> None:
    assert records.CaptureState is CaptureState
    assert CaptureState(1, Product.NFE) == CaptureState(company_id=1, product=Product.NFE, ult_nsu=0, max_nsu=0)


def test_rule_book_numbers_per_product() -> None:
    assert NFE_RULES.scheduler_cycle == timedelta(minutes=3)
    assert NFE_RULES.fallback_wait == timedelta(minutes=62)
    assert NFE_RULES.outage_pause(108) == timedelta(minutes=5)
    assert NFE_RULES.outage_pause(109) == timedelta(minutes=20)
    assert NFE_RULES.outage_pause(137) is None
    assert NFE_RULES.call_timeout == timedelta(minutes=5)
    assert CTE_RULES.scheduler_cycle == timedelta(seconds=60) and CTE_RULES.fallback_wait == timedelta(hours=1)
    assert NFSE_RULES.scheduler_cycle == timedelta(seconds=30) and NFSE_RULES.call_timeout == timedelta(seconds=60)
    assert NFSE_RULES.rejection_wait == timedelta(minutes=10) and NFSE_RULES.max_certificate_rejections == 10
    assert rules_for(Product.CTE) is CTE_RULES


def test_failure_backoff_doubles_up_to_the_cap() -> None:
    assert [NFE_RULES.failure_backoff(n).total_seconds() / 60 for n in range(1, 6)] == [1, 2, 4, 8, 8]
    assert NFSE_RULES.failure_backoff(7) == timedelta(hours=1)
    assert NFSE_RULES.failure_backoff(6) == timedelta(minutes=32)


def test_new_company_queries_from_nsu_zero() -> None:
    decision = _decide(CaptureState(1, Product.NFE))
    assert decision.action is Action.QUERY and decision.ult_nsu == 0


def test_certificate_problem_stops_before_any_call() -> None:
    decision = _decide(CaptureState(1, Product.NFE), certificate_problem="certificado vencido em 01/11/2026.")
    assert decision.action is Action.DISABLED
    assert "certificado vencido em 01/11/2026" in decision.reason


def test_disabled_capture_and_disabled_state() -> None:
    assert _decide(CaptureState(1, Product.NFE), enabled=False).action is Action.DISABLED
    stopped = CaptureState(
        1, Product.NFE, disabled_reason="Captura interrompida após 5 falhas.", consecutive_failures=5
    )
    decision = _decide(stopped)
    assert decision.action is Action.DISABLED and decision.reason == stopped.disabled_reason
    resumed = resume(stopped)
    assert resumed.disabled_reason is None and resumed.consecutive_failures == 0
    assert _decide(resumed).action is Action.QUERY
    assert _decide(replace(resumed, paused=True)).action is Action.DISABLED


def test_precedence_pause_then_block_then_wait() -> None:
    later = NOW + timedelta(minutes=30)
    state = CaptureState(
        1, Product.NFE, blocked_until=later, block_reason="bloqueio", next_query_at=later, wait_reason="espera"
    )
    paused = _decide(state, global_pause_until=NOW + timedelta(minutes=5))
    assert paused.action is Action.PAUSED and paused.until == NOW + timedelta(minutes=5)
    assert "pausadas até 10:05" in paused.reason
    assert _decide(state).action is Action.BLOCKED
    assert _decide(replace(state, blocked_until=None)).action is Action.WAIT
    assert _decide(state, now=later).action is Action.QUERY
    # an expired global pause does not hold anything
    assert _decide(state, now=later, global_pause_until=later).action is Action.QUERY


def test_decide_refuses_naive_now() -> None:
    with pytest.raises(ValueError, match="aware"):
        _decide(CaptureState(1, Product.NFE), now=NOW.replace(tzinfo=None))


def test_display_time_is_brasilia_rounded_up() -> None:
    assert display_time(datetime(2026, 11, 2, 17, 5, tzinfo=UTC), NOW) == "14:05"
    assert display_time(datetime(2026, 11, 2, 17, 5, 1, tzinfo=UTC), NOW) == "14:06"
    # 01:30 UTC on the 3rd is 22:30 on the 2nd in Brasília: the same local day as NOW
    assert display_time(datetime(2026, 11, 3, 1, 30, tzinfo=UTC), NOW) == "22:30"
    assert display_time(datetime(2026, 11, 3, 3, 30, tzinfo=UTC), NOW) == "03/11 00:30"


def test_after_service_mark_uses_the_offset_of_the_answer() -> None:
    # Service clock 20 s ahead of ours: dhResp 10:00:00 arrives at our 09:59:40.
    dh_resp = datetime(2026, 11, 2, 13, 0, 0, tzinfo=UTC)
    arrived = dh_resp - timedelta(seconds=20)
    until = after_service_mark(NFE_RULES, arrived, dh_resp, timedelta(hours=1))
    assert until == arrived + timedelta(hours=1) + SAFETY_MARGIN  # 11:00:20 on our clock
    # without dhResp: the rule book's 62 min from our receipt
    assert after_service_mark(NFE_RULES, NOW, None, timedelta(hours=1), fallback=timedelta(minutes=62)) == (
        NOW + timedelta(minutes=62)
    )
    # a fallback shorter than 1 h + margin never wins
    assert after_service_mark(CTE_RULES, NOW, None, timedelta(hours=1), fallback=timedelta(hours=1)) == (
        NOW + timedelta(hours=1) + SAFETY_MARGIN
    )


def test_skipped_nsus() -> None:
    assert skipped_nsus(100, 120, (101, 105)) == (tuple(n for n in range(102, 121) if n != 105), 0)
    assert skipped_nsus(100, 100, ()) == ((), 0)
    assert skipped_nsus(100, 90, ()) == ((), 0)
    # from NSU 0 the window's start is unknown: only holes after the first NSU received
    assert skipped_nsus(0, 5010, (5000, 5001, 5003, 5010)) == ((5002, *range(5004, 5010)), 0)
    assert skipped_nsus(0, 5000, ()) == ((), 0)
    gaps, dropped = skipped_nsus(1, 10_000_000, ())
    assert len(gaps) == MAX_GAP_NSUS and gaps[-1] == 10_000_000 and dropped == 10_000_000 - 1 - MAX_GAP_NSUS


def test_point_queries_allowed() -> None:
    state = CaptureState(1, Product.NFE, point_queries_blocked_until=NOW + timedelta(hours=1))
    assert not point_queries_allowed(state, NOW)
    assert point_queries_allowed(state, NOW + timedelta(hours=1))
    assert point_queries_allowed(CaptureState(1, Product.NFE), NOW)


def test_certificate_unavailable_waits_an_hour_and_stays_active() -> None:
    state = certificate_unavailable(CaptureState(1, Product.NFSE), NFSE_RULES, NOW, "certificado não encontrado")
    assert state.next_query_at == NOW + timedelta(hours=1) and state.disabled_reason is None
    decision = decide(state, NFSE_RULES, NOW, global_pause_until=None, certificate_problem=None, enabled=True)
    assert decision.action is Action.WAIT and "nova verificação às 11:00" in decision.reason


# ---------------------------------------------------------------- after a process died (call lease)


def test_after_lost_answers_puts_any_company_that_could_have_been_asked_into_the_hour() -> None:
    rules = rules_for(Product.NFE)
    lease = NOW + timedelta(minutes=6)
    expected = lease + rules.empty_queue_wait + rules.safety_margin
    due_now = CaptureState(1, Product.NFE, ult_nsu=40, max_nsu=40, next_query_at=NOW - timedelta(minutes=1))
    first_call = CaptureState(2, Product.NFE)  # never answered: NSU 0
    due_within = replace(due_now, company_id=3, next_query_at=lease - timedelta(seconds=1))
    for state in (due_now, first_call, due_within):
        changed = after_lost_answers(state, rules, lease, NOW)
        assert changed is not None and changed.next_query_at == expected, state
        assert changed.ult_nsu == state.ult_nsu and "consumo indevido" in (changed.wait_reason or "")


def test_after_lost_answers_leaves_those_that_could_not_have_ended_their_queue_or_been_asked() -> None:
    rules = rules_for(Product.NFE)
    lease = NOW + timedelta(minutes=6)
    base = CaptureState(1, Product.NFE, ult_nsu=40, max_nsu=40)
    untouched = [
        replace(base, max_nsu=40 + rules.lot_size + 1),  # a backlog: the same ultNSU again is in sequence
        replace(base, next_query_at=lease + timedelta(seconds=1)),  # waiting past the lease
        replace(base, blocked_until=lease + timedelta(minutes=30)),  # blocked past it
        replace(base, disabled_reason="Certificado vencido"),
        replace(base, paused=True),
    ]
    for state in untouched:
        assert after_lost_answers(state, rules, lease, NOW) is None, state
    # The lot that reaches maxNSU may end the queue: a backlog of exactly one lot is asked again later.
    assert after_lost_answers(replace(base, max_nsu=40 + rules.lot_size), rules, lease, NOW) is not None
