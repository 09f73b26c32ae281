"""CaptureService now (``run_once``) and its status, against the in-process sandbox on a virtual clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.products import REGISTRY, ProductUnavailable
from app.capture.service import CaptureService, ServiceError
from app.capture.status import BLOQUEADA, DESATIVADA, EM_ESPERA, PAUSA_GLOBAL
from app.core.cadence import Action
from app.core.products import Environment, Product
from tests.support.fleet import SUPPLIER, Fleet, fleet


@pytest.fixture
def office_fleet(tmp_path: Path) -> Iterator[Fleet]:
    with fleet(tmp_path, 3) as f:
        yield f


def test_second_run_once_does_not_query_a_waiting_company_and_says_why(office_fleet: Fleet) -> None:
    f = office_fleet
    first, second, third = f.companies
    for _ in range(3):
        f.sandbox.publish_nfe(SUPPLIER, first.cnpj.value)
    service = CaptureService(f.ctx)

    report = service.run_once()
    assert report.queries == 3 and report.documents == 3
    assert report.outcome(first.id).documents == 3
    requests = f.sandbox.referee.report()["requests"]

    f.fake_clock.advance(timedelta(seconds=5))
    again = service.run_once()
    assert f.sandbox.referee.report()["requests"] == requests  # nobody was asked again
    assert again.queries == 0
    for company in (first, second, third):
        outcome = again.outcome(company.id)
        assert not outcome.ran
        assert outcome.action is Action.WAIT
        assert outcome.until is not None and outcome.until > f.clock.now() + timedelta(minutes=59)
        assert "Aguardando" in outcome.reason
    as_json = json.loads(json.dumps(again.to_json()))
    assert as_json["companies"][0]["action"] == "wait"
    assert as_json["companies"][0]["until"].endswith("-03:00")  # Brasília time for people and scripts
    assert f.sandbox.referee.report()["violations"] == []


def test_run_once_for_one_company_leaves_the_others_alone(office_fleet: Fleet) -> None:
    f = office_fleet
    first, second, _third = f.companies
    report = CaptureService(f.ctx).run_once(company_id=second.id, product=Product.NFE)
    assert [o.company_id for o in report.outcomes] == [second.id]
    assert f.requests(second) == 1
    assert f.requests(first) == 0


def test_status_labels_for_waiting_blocked_paused_and_disabled(office_fleet: Fleet) -> None:
    f = office_fleet
    waiting, blocked, disabled = f.companies
    f.sandbox.publish_nfe(SUPPLIER, waiting.cnpj.value)
    service = CaptureService(f.ctx, workers=1)
    service.run_once()
    now = f.clock.now()
    state = f.ctx.cursors.get(blocked.id, Product.NFE)
    f.ctx.cursors.save(
        replace(state, blocked_until=now + timedelta(minutes=50), block_reason="SEFAZ bloqueou: consumo indevido.")
    )
    f.settings(disabled, enabled=False)
    f.ctx.recoveries.add(waiting.id, Product.NFE, next_attempt_at=now + timedelta(hours=2), nsus=(7, 8))

    by_id = {s.company_id: s for s in service.status()}
    assert by_id[waiting.id].label == EM_ESPERA
    assert by_id[waiting.id].next_query_at == by_id[waiting.id].until
    assert by_id[waiting.id].documents_today == 1
    assert by_id[waiting.id].pending_recoveries == 2
    assert by_id[waiting.id].last_cstat == "138"
    assert by_id[blocked.id].label == BLOQUEADA
    assert by_id[blocked.id].reason == "SEFAZ bloqueou: consumo indevido."
    assert by_id[blocked.id].until == now + timedelta(minutes=50)
    assert by_id[disabled.id].label == DESATIVADA
    assert "desativada" in by_id[disabled.id].reason
    assert by_id[disabled.id].next_query_at is None
    assert not any(s.stalled for s in by_id.values())

    f.ctx.cursors.set_pause(Product.NFE, Environment.HOMOLOGACAO, now + timedelta(minutes=20), "Paralisado", "109")
    paused = {s.company_id: s for s in service.status()}
    assert paused[waiting.id].label == PAUSA_GLOBAL  # the pause outranks the company's own wait
    assert paused[blocked.id].label == PAUSA_GLOBAL
    assert paused[disabled.id].label == DESATIVADA
    assert json.dumps([s.to_json() for s in paused.values()])


def test_documents_today_counts_from_midnight_in_brasilia(office_fleet: Fleet) -> None:
    f = office_fleet
    company = f.companies[0]
    # 02:50 UTC is 23:50 in Brasília: these belong to "yesterday".
    f.fake_clock.set(f.clock.now().replace(hour=2, minute=50) + timedelta(days=1))
    f.sandbox.publish_nfe(SUPPLIER, company.cnpj.value)
    service = CaptureService(f.ctx)
    service.run_once(company_id=company.id)
    f.fake_clock.advance(timedelta(hours=1, minutes=5))  # 00:55 in Brasília
    f.sandbox.publish_nfe(SUPPLIER, company.cnpj.value)
    f.sandbox.publish_nfe(SUPPLIER, company.cnpj.value)
    assert service.run_once(company_id=company.id).documents == 2
    [status] = service.status(company_id=company.id)
    assert status.documents_today == 2


def test_products_without_an_engine_are_refused_with_a_reason(office_fleet: Fleet) -> None:
    registry = dict(REGISTRY)
    try:
        del REGISTRY[Product.NFSE]  # a version without an engine for a product
        with pytest.raises(ProductUnavailable, match="NFS-e"):
            CaptureService(office_fleet.ctx, products=(Product.NFE, Product.NFSE))
        service = CaptureService(office_fleet.ctx)
        assert set(service.captures) == {Product.NFE, Product.CTE}  # by default, every registered product
        with pytest.raises(ServiceError, match="NFS-e"):
            service.run_once(product=Product.NFSE)
    finally:
        REGISTRY.clear()
        REGISTRY.update(registry)
    assert set(CaptureService(office_fleet.ctx).captures) == {Product.NFE, Product.CTE, Product.NFSE}


def test_a_clean_run_once_leaves_no_call_lease_and_the_next_start_no_extra_wait(office_fleet: Fleet) -> None:
    f = office_fleet
    first = f.companies[0]
    for _ in range(60):  # more than a lot: the run chains, then stops at maxNSU
        f.sandbox.publish_nfe(SUPPLIER, first.cnpj.value)
    service = CaptureService(f.ctx)
    service.run_once()
    assert f.ctx.cursors.answers_lease(Product.NFE) is None
    before = {c.id: f.ctx.cursors.get(c.id, Product.NFE) for c in f.companies}
    CaptureService(f.ctx).recover_after_crash()
    assert {c.id: f.ctx.cursors.get(c.id, Product.NFE) for c in f.companies} == before


def test_a_start_after_a_process_died_holding_the_lease_waits_the_hour_for_who_it_may_have_asked(
    office_fleet: Fleet,
) -> None:
    f = office_fleet
    first, second, third = f.companies
    rules = CaptureService(f.ctx).captures[Product.NFE].distribution.rules
    f.ctx.cursors.save(
        replace(f.ctx.cursors.get(second.id, Product.NFE), next_query_at=f.clock.now() + timedelta(hours=2))
    )
    # The dead process: it held the lease for answers until 7 min from now.
    answers_by = f.clock.now() + timedelta(minutes=7)
    f.ctx.cursors.hold_answers_until(Product.NFE, answers_by)
    service = CaptureService(f.ctx)
    service.recover_after_crash()
    assert f.ctx.cursors.answers_lease(Product.NFE) is None
    for company in (first, third):  # never answered (NSU 0): either could have been asked
        state = f.ctx.cursors.get(company.id, Product.NFE)
        assert state.next_query_at == answers_by + rules.empty_queue_wait + rules.safety_margin
    assert f.ctx.cursors.get(second.id, Product.NFE).next_query_at == f.clock.now() + timedelta(hours=2)
    report = service.run_once()
    assert report.queries == 0 and f.sandbox.referee.report()["requests"] == 0


def test_a_stopped_company_is_queried_again_once_resumed(office_fleet: Fleet) -> None:
    f = office_fleet
    first = f.companies[0]
    stopped = replace(
        f.ctx.cursors.get(first.id, Product.NFE), disabled_reason="5 falhas seguidas", consecutive_failures=5
    )
    f.ctx.cursors.save(stopped)
    service = CaptureService(f.ctx)
    report = service.run_once(company_id=first.id)
    assert report.queries == 0 and report.outcome(first.id).action is Action.DISABLED
    assert service.resume(first.id) == [Product.NFE]
    assert service.resume(first.id) == []  # nothing left to resume
    state = f.ctx.cursors.get(first.id, Product.NFE)
    assert state.disabled_reason is None and state.consecutive_failures == 0
    assert service.run_once(company_id=first.id).queries == 1
