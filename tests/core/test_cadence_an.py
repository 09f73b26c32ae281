from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.cadence import (
    CTE_RULES,
    MAX_GAP_NSUS,
    NFE_RULES,
    SAFETY_MARGIN,
    Action,
    CaptureState,
    CommunicationFailure,
    Decision,
    Transition,
    decide,
    point_queries_allowed,
    resume,
)
from app.core.cadence_an import DistributionResult, apply_distribution, apply_point_query_block
from app.core.products import Product

HOUR = timedelta(hours=1)
T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília


def _state(**kw: object) -> CaptureState:
    return replace(CaptureState(7, Product.NFE), **kw)  # type: ignore[arg-type]


def _decide(state: CaptureState, now: datetime, pause: datetime | None = None) -> Decision:
    return decide(state, NFE_RULES, now, global_pause_until=pause, certificate_problem=None, enabled=True)


def _apply(state: CaptureState, now: datetime, result: DistributionResult | CommunicationFailure) -> Transition:
    return apply_distribution(state, NFE_RULES, now, result)


# ---------------------------------------------------------------- 138 and 137


def test_138_with_pending_queue_chains_immediately_and_reports_holes() -> None:
    result = DistributionResult(
        138, "Documento(s) localizado(s)", T0, 150, 400, tuple(n for n in range(101, 151) if n != 120)
    )
    t = _apply(_state(ult_nsu=100, max_nsu=300), T0, result)
    assert t.chain_immediately and t.state.ult_nsu == 150 and t.state.max_nsu == 400
    assert t.gap_nsus == (120,)
    assert t.state.next_query_at is None and t.state.last_cstat == "138"
    assert _decide(t.state, T0).action is Action.QUERY and _decide(t.state, T0).ult_nsu == 150


def test_138_reaching_max_starts_the_wait_from_the_service_clock() -> None:
    dh_resp = T0
    arrived = T0 + timedelta(seconds=2)  # our clock 2 s behind the service... plus latency
    result = DistributionResult(138, "Documento(s) localizado(s)", dh_resp, 130, 130, tuple(range(101, 131)))
    t = _apply(_state(ult_nsu=100, max_nsu=130), arrived, result)
    assert not t.chain_immediately and t.gap_nsus == ()
    assert t.state.next_query_at == arrived + HOUR + SAFETY_MARGIN
    assert t.state.wait_reason == "Aguardando 1 hora: todos os documentos disponíveis foram recebidos (até 11:01)."


def test_137_with_service_clock_20s_ahead() -> None:
    # dhResp 10:00:00 (Brasília) read at our 09:59:40: the service runs 20 s ahead.
    dh_resp = T0
    arrived = T0 - timedelta(seconds=20)
    t = _apply(
        _state(ult_nsu=500, max_nsu=500),
        arrived,
        DistributionResult(137, "Nenhum documento localizado", dh_resp, 500, 500),
    )
    assert t.state.clock_offset_ms == 20_000 and t.state.last_dh_resp == dh_resp
    # 10:00:00 + 1 h + 40 s on the service's clock = 11:00:20 on ours
    expected = datetime(2026, 11, 2, 14, 0, 20, tzinfo=UTC)
    assert t.state.next_query_at == expected
    waiting = _decide(t.state, expected - timedelta(seconds=1))
    assert waiting.action is Action.WAIT and waiting.until == expected
    assert waiting.reason == "Aguardando 1 hora após 'nenhum documento localizado' (até 11:01)."
    assert _decide(t.state, expected).action is Action.QUERY


def test_document_published_right_after_a_query_is_captured_within_61_minutes() -> None:
    arrived = T0 + timedelta(milliseconds=300)  # answer latency
    t = _apply(_state(ult_nsu=9, max_nsu=9), arrived, DistributionResult(137, "Nenhum", T0, 9, 9))
    assert t.state.next_query_at is not None
    assert t.state.next_query_at - T0 < timedelta(minutes=61)
    assert t.state.next_query_at - T0 >= HOUR + SAFETY_MARGIN  # and never before the service's hour


def test_137_without_dh_resp_falls_back_to_62_minutes() -> None:
    t = _apply(_state(ult_nsu=5, max_nsu=5), T0, DistributionResult(137, "Nenhum documento localizado"))
    assert t.state.next_query_at == T0 + timedelta(minutes=62)
    cte = apply_distribution(
        CaptureState(7, Product.CTE, ult_nsu=5, max_nsu=5), CTE_RULES, T0, DistributionResult(137, "Nenhum")
    )
    assert cte.state.next_query_at == T0 + HOUR + SAFETY_MARGIN


def test_137_moves_cursor_only_forward() -> None:
    t = _apply(_state(ult_nsu=50, max_nsu=60), T0, DistributionResult(137, "Nenhum", T0, 40, 55))
    assert t.state.ult_nsu == 50 and t.state.max_nsu == 60 and t.gap_nsus == ()
    t = _apply(_state(ult_nsu=50, max_nsu=60), T0, DistributionResult(137, "Nenhum", T0, 53, 53))
    assert t.state.ult_nsu == 53 and t.gap_nsus == (51, 52, 53)


def test_first_sync_from_zero_does_not_invent_gaps_before_the_window() -> None:
    received = tuple(range(7001, 7051))
    t = _apply(_state(), T0, DistributionResult(138, "Documento(s) localizado(s)", T0, 7050, 9000, received))
    assert t.state.ult_nsu == 7050 and t.gap_nsus == () and t.chain_immediately


# ---------------------------------------------------------------- 656


def test_656_carrying_a_higher_ult_nsu_moves_forward_blocks_and_queues_gaps() -> None:
    t = _apply(
        _state(ult_nsu=100, max_nsu=110), T0, DistributionResult(656, "Rejeicao: Consumo Indevido", T0, 120, 130)
    )
    assert t.state.ult_nsu == 120 and t.state.max_nsu == 130
    assert t.gap_nsus == tuple(range(101, 121))
    until = T0 + HOUR + SAFETY_MARGIN
    assert t.state.blocked_until == until and t.state.point_queries_blocked_until == until
    assert t.alert is None  # the engine tells the clerk from the sighting, with the tally
    sighting = t.other_consumer
    assert sighting is not None and (sighting.seen_at, sighting.cstat) == (T0, 656)
    assert (sighting.from_nsu, sighting.to_nsu, sighting.skipped, sighting.queued) == (100, 120, 20, 20)
    blocked = _decide(t.state, T0 + timedelta(minutes=59))
    assert blocked.action is Action.BLOCKED
    assert blocked.reason == (
        "SEFAZ bloqueou consultas até 11:01: outro sistema consulta as NF-e desta empresa com o mesmo "
        "certificado (consumo indevido, cStat 656)."
    )
    assert not point_queries_allowed(t.state, T0 + timedelta(minutes=30))
    after = _decide(t.state, until)
    assert after.action is Action.QUERY and after.ult_nsu == 120


def test_656_with_lower_ult_nsu_leaves_the_cursor() -> None:
    t = _apply(_state(ult_nsu=100, max_nsu=110), T0, DistributionResult(656, "Consumo Indevido", T0, 80, 90))
    assert t.state.ult_nsu == 100 and t.state.max_nsu == 110 and t.gap_nsus == ()
    assert t.state.blocked_until == T0 + HOUR + SAFETY_MARGIN
    # Our cadence allowed the query: the 656 still reveals another system, which took nothing.
    assert t.other_consumer is not None and t.other_consumer.from_nsu == t.other_consumer.to_nsu == 100


def test_a_lot_starting_past_the_cursor_reveals_another_consumer() -> None:
    received = tuple(range(131, 141))
    t = _apply(_state(ult_nsu=100, max_nsu=110), T0, DistributionResult(138, "Ok", T0, 140, 140, received))
    assert t.state.ult_nsu == 140 and t.gap_nsus == tuple(range(101, 131))
    sighting = t.other_consumer
    assert sighting is not None and (sighting.from_nsu, sighting.to_nsu, sighting.skipped) == (100, 130, 30)
    in_sequence = _apply(_state(ult_nsu=100), T0, DistributionResult(138, "Ok", T0, 110, 110, tuple(range(101, 111))))
    assert in_sequence.other_consumer is None
    # From 0 the service starts at its 3-month window: no other system is implied.
    first = _apply(_state(), T0, DistributionResult(138, "Ok", T0, 7050, 7050, tuple(range(7001, 7051))))
    assert first.other_consumer is None


def test_a_jump_past_the_gap_limit_reports_the_rest_out_of_reach() -> None:
    t = _apply(_state(ult_nsu=0), T0, DistributionResult(656, "Consumo Indevido", T0, 5000, 5000))
    sighting = t.other_consumer
    assert sighting is not None and len(t.gap_nsus) == MAX_GAP_NSUS
    assert (sighting.skipped, sighting.queued, sighting.out_of_reach) == (5000, MAX_GAP_NSUS, 5000 - MAX_GAP_NSUS)
    assert t.gap_nsus[0] == 5000 - MAX_GAP_NSUS + 1  # the newest: the oldest leave the window first


def test_656_on_a_point_query_suspends_point_queries_and_distribution() -> None:
    state = apply_point_query_block(_state(ult_nsu=10, max_nsu=10), NFE_RULES, T0, None)
    assert state.point_queries_blocked_until == T0 + HOUR + SAFETY_MARGIN
    assert _decide(state, T0 + timedelta(minutes=10)).action is Action.BLOCKED
    # an existing longer block is kept
    longer = T0 + 2 * HOUR
    assert apply_point_query_block(_state(blocked_until=longer), NFE_RULES, T0, None).blocked_until == longer


# ---------------------------------------------------------------- outages and rejections


def test_108_pauses_every_company_5_minutes_and_109_20_minutes() -> None:
    state = _state(ult_nsu=10, max_nsu=20)
    t = _apply(state, T0, DistributionResult(108, "Servico Paralisado Momentaneamente", T0))
    assert t.global_pause is not None and t.global_pause.cstat == 108
    assert t.global_pause.until == T0 + timedelta(minutes=5) + SAFETY_MARGIN
    assert t.state.ult_nsu == 10 and t.state.next_query_at == t.global_pause.until  # held on the company too
    paused = _decide(t.state, T0 + timedelta(minutes=3), t.global_pause.until)
    assert paused.action is Action.PAUSED and "SEFAZ paralisada" in paused.reason
    t = _apply(state, T0, DistributionResult(109, "Servico Paralisado sem Previsao", T0))
    assert t.global_pause is not None and t.global_pause.until == T0 + timedelta(minutes=20) + SAFETY_MARGIN


def test_other_rejection_blocks_one_hour_with_its_cstat() -> None:
    t = _apply(_state(ult_nsu=10, max_nsu=20), T0, DistributionResult(215, "Rejeicao: Falha no schema XML", T0, 0, 0))
    assert t.state.blocked_until == T0 + HOUR + SAFETY_MARGIN and t.state.ult_nsu == 10
    assert t.state.last_cstat == "215" and t.alert is None
    assert t.state.block_reason == (
        "Consultas suspensas até 11:01 após rejeição da SEFAZ (cStat 215: Rejeicao: Falha no schema XML)."
    )
    t = _apply(
        _state(ult_nsu=900, max_nsu=900), T0, DistributionResult(589, "Rejeicao: NSU informado superior", T0, 0, 800)
    )
    assert t.alert is not None and "589" in t.alert and "000000000000900" in t.alert
    assert t.state.ult_nsu == 900 and t.state.max_nsu == 900


# ---------------------------------------------------------------- communication failures


def test_failures_back_off_then_stop_after_five() -> None:
    state = _state(ult_nsu=100, max_nsu=1000)  # a known backlog larger than one lot
    now = T0
    waits = []
    for _ in range(4):
        t = _apply(state, now, CommunicationFailure("tempo esgotado"))
        state = t.state
        assert state.next_query_at is not None
        waits.append(state.next_query_at - now)
        assert _decide(state, now).action is Action.WAIT
        now = state.next_query_at
    assert waits == [timedelta(minutes=m) for m in (1, 2, 4, 8)]
    assert "Falha de comunicação (4 de 5): tempo esgotado" in (state.wait_reason or "")
    t = _apply(state, now, CommunicationFailure("tempo esgotado"))
    assert t.state.disabled_reason is not None and "5 falhas" in t.state.disabled_reason and t.alert
    assert _decide(t.state, now + timedelta(days=1)).action is Action.DISABLED
    assert _decide(resume(t.state), now + timedelta(days=1)).action is Action.QUERY


def test_a_stop_after_lost_answers_keeps_the_hour_a_resume_would_break() -> None:
    """bench_month: five hourly timeouts whose answers the service did send (the queue's end),
    the company stopped, a person resumed it 36 minutes after the last one: a 656. The stop
    keeps the lost answer's hour, and resuming keeps it too."""
    state = _state(ult_nsu=62, max_nsu=62, consecutive_failures=4)
    t = _apply(state, T0, CommunicationFailure("tempo esgotado"))
    assert t.state.disabled_reason is not None and t.alert
    resumed = resume(t.state)
    soon = _decide(resumed, T0 + timedelta(minutes=36))
    assert soon.action is Action.WAIT and soon.until == T0 + HOUR + SAFETY_MARGIN
    assert "resposta perdida" in soon.reason
    assert _decide(resumed, T0 + HOUR + SAFETY_MARGIN).action is Action.QUERY


def test_a_valid_answer_resets_the_failure_count() -> None:
    t = _apply(
        _state(ult_nsu=1, max_nsu=500, consecutive_failures=3),
        T0,
        DistributionResult(138, "ok", T0, 51, 500, tuple(range(2, 52))),
    )
    assert t.state.consecutive_failures == 0


def test_a_lost_answer_that_may_have_ended_the_queue_waits_the_hour() -> None:
    t = _apply(_state(ult_nsu=100, max_nsu=120), T0, CommunicationFailure("resposta truncada"))
    assert t.state.next_query_at == T0 + HOUR + SAFETY_MARGIN
    assert "pode ter encerrado a fila" in (t.state.wait_reason or "")
    # a refused connection never reached the service: the short backoff is safe
    t = _apply(
        _state(ult_nsu=100, max_nsu=120), T0, CommunicationFailure("conexão recusada", may_have_reached_service=False)
    )
    assert t.state.next_query_at == T0 + timedelta(minutes=1)


def test_a_failure_never_shortens_an_existing_wait() -> None:
    later = T0 + 2 * HOUR
    t = _apply(_state(ult_nsu=1, max_nsu=900, next_query_at=later, wait_reason="x"), T0, CommunicationFailure("e"))
    assert t.state.next_query_at == later


# ---------------------------------------------------------------- property


@dataclass
class _Service:
    """A tiny AN: its own clock, sequence and idle mark, as the sandbox keeps them."""

    max_nsu: int = 0
    idle_since: datetime | None = None
    blocked_until: datetime | None = None
    paused_until: datetime | None = None


_FAULTS = ["ok", "ok", "ok", "ok", "lost", "refused", "108", "109", "competitor", "no_dh"]


@settings(max_examples=300, deadline=None, database=None)  # nothing written outside tmp dirs
@given(
    offset_s=st.integers(-900, 900),
    steps=st.lists(
        st.tuples(
            st.integers(0, 5400),  # our clock advances (s)
            st.integers(0, 140),  # documents published meanwhile
            st.sampled_from(_FAULTS),
            st.integers(0, 4000),  # request latency (ms)
            st.integers(0, 4000),  # answer latency (ms)
            st.booleans(),  # the engine wakes exactly at the end of a wait
        ),
        max_size=40,
    ),
)
def test_never_queries_within_the_services_hour_and_never_moves_back(
    offset_s: int, steps: list[tuple[int, int, str, int, int, bool]]
) -> None:
    offset = timedelta(seconds=offset_s)  # service clock minus ours
    service = _Service()
    state = CaptureState(7, Product.NFE)
    ours = T0
    pause_until: datetime | None = None
    for advance, published, fault, req_ms, resp_ms, punctual in steps:
        ours += timedelta(seconds=advance)
        service.max_nsu += published
        for _lot in range(30):  # one step may chain several lots
            decision = decide(
                state, NFE_RULES, ours, global_pause_until=pause_until, certificate_problem=None, enabled=True
            )
            if decision.action is Action.DISABLED:
                state = resume(state)
                break
            if decision.action is not Action.QUERY:
                if not punctual or decision.until is None:
                    break
                ours = decision.until  # the engine wakes exactly when the wait ends
                continue
            assert decision.ult_nsu == state.ult_nsu
            at = ours + offset + timedelta(milliseconds=req_ms)  # arrival, service clock
            # the rules the sandbox referee judges, on the service's clock
            if service.idle_since is not None:
                assert at >= service.idle_since + HOUR, "query within the hour after an empty queue"
            if service.blocked_until is not None:
                assert at >= service.blocked_until, "query during a 656 block"
            if service.paused_until is not None:
                assert at >= service.paused_until, "query during an outage pause"
            ours += timedelta(milliseconds=req_ms + resp_ms)  # when the answer (or failure) arrives
            dh = at.replace(microsecond=0)  # dhResp has 1-s resolution
            result: DistributionResult | CommunicationFailure
            if fault == "refused":
                result = CommunicationFailure("conexão recusada", may_have_reached_service=False)
            elif fault in ("108", "109"):
                service.paused_until = at + NFE_RULES.outage_pause(int(fault))  # type: ignore[operator]
                result = DistributionResult(int(fault), "Servico Paralisado", dh)
            elif fault == "competitor":
                service.blocked_until = at + HOUR  # another system took the sequence: 656
                result = DistributionResult(656, "Consumo Indevido", dh, service.max_nsu, service.max_nsu)
            else:
                ult = decision.ult_nsu or 0
                docs = min(50, max(0, service.max_nsu - ult))
                new_ult = ult + 50 if docs == 50 else max(service.max_nsu, ult)
                service.idle_since = at if new_ult >= service.max_nsu else None
                answer = DistributionResult(
                    138 if docs else 137,
                    "ok",
                    None if fault == "no_dh" else dh,
                    new_ult,
                    service.max_nsu,
                    tuple(range(ult + 1, ult + docs + 1)),
                )
                result = CommunicationFailure("tempo esgotado") if fault == "lost" else answer
            before = state
            t = apply_distribution(state, NFE_RULES, ours, result)
            state = t.state
            assert state.ult_nsu >= before.ult_nsu and state.max_nsu >= before.max_nsu
            if t.global_pause is not None:
                pause_until = t.global_pause.until
            if not t.chain_immediately:
                break
            fault = "ok"  # the chained lots of this step answer normally


def test_656_from_nsu_zero_turns_every_consumed_nsu_into_a_gap() -> None:
    # A new company whose CNPJ another system already read: the 656 carries ultNSU 6 and sends
    # nothing, so NSUs 1..6 can only come back by consNSU (137 ends those out of the window).
    state = CaptureState(company_id=1, product=Product.NFE)
    now = datetime(2026, 11, 2, 15, 0, tzinfo=UTC)
    result = DistributionResult(cstat=656, xmotivo="Rejeicao: Consumo Indevido", dh_resp=now, ult_nsu=6, max_nsu=9)
    transition = apply_distribution(state, NFE_RULES, now, result)
    assert transition.state.ult_nsu == 6
    assert transition.gap_nsus == (1, 2, 3, 4, 5, 6)
    # A 137 from zero is different: NSUs before the window are not gaps.
    quiet = apply_distribution(state, NFE_RULES, now, DistributionResult(137, "Nenhum", now, ult_nsu=6, max_nsu=6))
    assert quiet.gap_nsus == ()
