"""NF-e distribution against the sandbox: real mutual TLS, virtual clock, the referee as judge."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import httpx

from app.capture.engine import may_have_reached_service
from app.core.cadence import Action
from app.core.products import Product
from app.fiscal.errors import ConnectionFailed, ServiceTimeout
from app.store.records import DocumentKind, RunStatus
from tests.capture.conftest import CARRIER, RECIPIENT, SUPPLIER, Harness
from tests.support.engines import harness_on_both_engines  # noqa: F401  (its "harness": both engines)


def test_new_company_starts_at_nsu_zero_and_chains_until_max(harness: Harness) -> None:
    # 120 documents already waiting: three lots of 50, 50 and 20, chained without waiting.
    for i in range(120):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT, at=harness.clock.now() - timedelta(days=30, minutes=i))
    result = harness.capture.distribution.run_company(harness.company.id)
    assert result.queries == 3
    assert result.documents == 120
    state = harness.ctx.cursors.get(harness.company.id, Product.NFE)
    assert state.ult_nsu == state.max_nsu == harness.sandbox.max_nsu("nfe", RECIPIENT)
    assert result.decision.action is Action.WAIT  # caught up: the hour starts
    assert harness.stored_nsus() == list(range(1, 121))
    report = harness.sandbox.referee.report()
    assert report["violations"] == []


def test_a_run_row_comes_with_its_first_answer_and_links_every_call(harness: Harness) -> None:
    for i in range(60):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT, at=harness.clock.now() - timedelta(days=3, minutes=i))
    began = harness.clock.now()
    result = harness.capture.distribution.run_company(harness.company.id)
    assert result.queries == 2
    [run] = [r for r in harness.ctx.runs.recent() if r.job_type == "nfe_distribution"]
    assert run.company_id == harness.company.id and run.status is RunStatus.SUCCEEDED
    assert run.started_at == began  # when it began, not when its first answer was stored
    calls = [c for c in harness.ctx.audit.recent_calls(company_id=harness.company.id) if c.operation == "distNSU"]
    assert len(calls) == 2 and {c.run_id for c in calls} == {run.id}


def test_waits_an_hour_on_the_services_clock_then_captures_within_61_minutes(harness: Harness) -> None:
    harness.run_pending()  # 137: nothing yet; the hour starts
    first_answer = harness.clock.now()
    published = first_answer + timedelta(seconds=5)
    harness.at(published, lambda: harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT))
    harness.run_until(first_answer + timedelta(hours=3))
    report = harness.sandbox.referee.report()
    assert report["violations"] == []
    latency = report["companies"][RECIPIENT]["nfe"]["latency_seconds"]
    assert list(latency) == ["1"]
    assert latency["1"] <= 61 * 60  # the seed's 62-65 min, improved without a 656
    assert latency["1"] >= 59 * 60  # and never before the hour


def test_expired_certificate_stops_before_any_call(harness: Harness) -> None:
    expired_at = harness.ctx.certificates.get(harness.company, harness.clock.now()).not_after
    harness.clock.set(expired_at + timedelta(days=1))
    harness.run_pending()
    _state, decision = harness.capture.distribution.decision(
        harness.company,
        harness.office.companies.get_settings(harness.company.id, Product.NFE),  # type: ignore[arg-type]
        harness.clock.now(),
    )
    assert decision.action is Action.DISABLED
    assert "vencido" in decision.reason
    assert harness.sandbox.referee.report()["requests"] == 0


def test_outage_108_pauses_every_company_for_five_minutes(harness: Harness) -> None:
    harness.sandbox.outage("nfe_dist", 108, harness.clock.now() + timedelta(minutes=2))
    harness.run_pending()
    pause = harness.ctx.cursors.get_pause(
        Product.NFE,
        harness.office.companies.get_settings(  # type: ignore[union-attr]
            harness.company.id, Product.NFE
        ).environment,
    )
    assert pause is not None and pause.cstat == "108"
    assert pause.paused_until >= harness.clock.now() + timedelta(minutes=5)
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_until(harness.clock.now() + timedelta(minutes=20))
    report = harness.sandbox.referee.report()
    assert report["violations"] == []
    assert report["companies"][RECIPIENT]["nfe"]["undelivered"] == []


def test_competitor_656_moves_cursor_forward_and_recovers_the_gap(harness: Harness) -> None:
    for _ in range(3):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()  # NSU 1..3; caught up, so the hour starts
    our_answer = harness.clock.now()
    for _ in range(4):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT, transporter=CARRIER)
    # Another system with the same certificate queries legitimately 10 s after the hour and takes
    # NSU 4..7: the AN now expects ultNSU 7 from everyone, so our ultNSU 3 is out of sequence.
    competitor_at = our_answer + timedelta(hours=1, seconds=10)
    harness.at(competitor_at, lambda: harness.sandbox.competitor_query(RECIPIENT, "nfe", ult_nsu=3))
    harness.run_until(our_answer + timedelta(hours=5))

    state = harness.ctx.cursors.get(harness.company.id, Product.NFE)
    assert state.ult_nsu == 7  # moved forward to the 656's ultNSU, never back
    assert harness.stored_nsus() == list(range(1, 8))  # the skipped NSUs came back by consNSU
    report = harness.sandbox.referee.report()
    delivered = report["companies"][RECIPIENT]["nfe"]["delivered"]
    assert {delivered[str(n)]["via"][0] for n in range(4, 8)} == {"consNSU"}
    assert report["companies"][RECIPIENT]["nfe"]["competitor_delivered"]
    calls = [(c.operation, c.cstat) for c in reversed(harness.ctx.audit.recent_calls(50))]
    assert ("distNSU", "656") in calls  # the competitor's doing, not a rule we broke
    assert report["violations"] == []
    assert report["companies"][RECIPIENT]["nfe"]["undelivered"] == []


def test_corrupt_doczip_is_quarantined_and_the_rest_of_the_lot_is_kept(harness: Harness) -> None:
    for _ in range(5):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.inject_fault("nfe_dist", "corrupt_gzip")
    result = harness.capture.distribution.run_company(harness.company.id)
    assert result.documents + result.quarantined == 5
    assert result.quarantined == 1
    assert harness.stored_nsus() == [1, 2, 3, 4, 5]  # nothing lost: the bad one is kept too
    from app.store.records import DocumentQuery

    query = DocumentQuery(company_id=harness.company.id, product=Product.NFE)
    ids = harness.ctx.documents.page_ids(query, 0, 50)
    quarantined = [s for s in harness.ctx.documents.summaries(ids) if s.quarantined]
    assert len(quarantined) == 1 and quarantined[0].parse_error
    assert quarantined[0].kind is DocumentKind.UNKNOWN
    # The service still holds the document: the recovery fetches it again and heals the NSU.
    harness.run_until(harness.clock.now() + timedelta(minutes=30))
    summaries = harness.ctx.documents.summaries(harness.ctx.documents.page_ids(query, 0, 50))
    assert not [s for s in summaries if s.quarantined]
    assert len(summaries) == 5 and harness.stored_nsus() == [1, 2, 3, 4, 5]
    assert harness.sandbox.referee.report()["violations"] == []


def test_a_connection_dropped_after_the_request_waits_the_hour(harness: Harness) -> None:
    # The service answers 137 and the connection closes before the answer arrives: that 137 may
    # have ended the queue, so asking again within the hour would be a 656.
    harness.sandbox.inject_fault("nfe_dist", "close")
    start = harness.clock.now()
    harness.run_until(start + timedelta(hours=2, minutes=5))
    times = [r.at for r in harness.sandbox.referee.requests if r.service == "nfe_dist"]
    assert len(times) >= 2 and times[1] - times[0] >= timedelta(hours=1)
    assert harness.sandbox.referee.report()["violations"] == []


def test_only_a_connection_never_made_is_known_not_to_have_reached_the_service() -> None:
    refused = ConnectionFailed("Não foi possível conectar.")
    refused.__cause__ = httpx.ConnectError("connection refused")
    dropped = ConnectionFailed("A conexão foi interrompida.")
    dropped.__cause__ = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    assert may_have_reached_service(refused) is False
    assert may_have_reached_service(dropped) is True
    assert may_have_reached_service(ConnectionFailed("sem causa conhecida")) is False
    assert may_have_reached_service(ServiceTimeout("O serviço não respondeu.")) is True


def test_a_company_disabled_between_the_pass_and_its_run_is_not_queried(harness: Harness) -> None:
    # ``due`` hands its reading of the settings to the run it starts (no second read); a change
    # made in between must still win.
    h = harness
    engine = h.capture.distribution
    assert [c.id for c in engine.due(h.clock.now())] == [h.company.id]
    settings = h.ctx.companies.get_settings(h.company.id, Product.NFE)
    assert settings is not None
    h.ctx.companies.save_settings(replace(settings, enabled=False))
    result = engine.run_company(h.company.id)
    assert result.queries == 0 and result.decision.action is Action.DISABLED
    assert h.sandbox.referee.requests == []


def _count_state_reads(h: Harness) -> list[int]:
    """Instrument the state reads of the engine's repository (the real one is still called)."""
    reads: list[int] = []
    original = h.ctx.cursors.get_with_pause

    def counted(*args: object, **kwargs: object) -> object:
        reads.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    h.ctx.cursors.get_with_pause = counted  # type: ignore[method-assign]
    return reads


def test_the_run_decides_on_the_passs_reading_when_nothing_was_written_since(harness: Harness) -> None:
    h = harness
    engine = h.capture.distribution
    reads = _count_state_reads(h)
    assert [c.id for c in engine.due(h.clock.now())] == [h.company.id]
    assert len(reads) == 1
    result = engine.run_company(h.company.id)
    assert result.queries == 1
    assert len(reads) == 1  # the one-lot run used due's reading


def test_a_pause_set_between_the_pass_and_its_run_is_obeyed(harness: Harness) -> None:
    # Another company's answer (a 108) pauses the whole environment after ``due`` read this one.
    h = harness
    engine = h.capture.distribution
    assert [c.id for c in engine.due(h.clock.now())] == [h.company.id]
    settings = h.ctx.companies.get_settings(h.company.id, Product.NFE)
    assert settings is not None
    until = h.clock.now() + timedelta(minutes=5)
    h.ctx.cursors.set_pause(Product.NFE, settings.environment, until, "Serviço paralisado (teste)", "108")
    result = engine.run_company(h.company.id)
    assert result.queries == 0 and result.decision.action is Action.PAUSED
    assert h.sandbox.referee.requests == []


def test_a_state_written_between_the_pass_and_its_run_is_obeyed(harness: Harness) -> None:
    # A point query's 656 blocks the distribution too: written after ``due`` read the state.
    h = harness
    engine = h.capture.distribution
    assert [c.id for c in engine.due(h.clock.now())] == [h.company.id]
    state = h.ctx.cursors.get(h.company.id, Product.NFE)
    until = h.clock.now() + timedelta(hours=1)
    h.ctx.cursors.save(replace(state, next_query_at=until, wait_reason="Bloqueio de teste"))
    result = engine.run_company(h.company.id)
    assert result.queries == 0 and result.decision.until == until
    assert h.sandbox.referee.requests == []


def test_planned_next_follows_every_change_of_the_plan(harness: Harness) -> None:
    h = harness
    engine = h.capture.distribution
    now = h.clock.now()
    assert engine.planned_next() is None
    engine.due(now)
    assert engine.planned_next() == now  # due now
    assert engine.planned_next(after=now) is None
    result = engine.run_company(h.company.id)
    planned = engine.planned_next()
    assert result.decision.until is not None and planned == result.decision.until > now
    assert engine.planned_next(after=now) == planned
    assert engine.planned_next(after=planned) is None
    engine.replan(h.company.id)
    assert engine.planned_next() is None
