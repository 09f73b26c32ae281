"""consNSU/consChNFe: only for gaps and user requests, within the quota, never for what is stored."""

from __future__ import annotations

from datetime import timedelta

from app.core.keys import AccessKey
from app.core.products import Product
from tests.capture.conftest import RECIPIENT, SUPPLIER, Harness


def test_a_stored_document_is_never_queried_again(harness: Harness) -> None:
    harness.settings(auto_ciencia=True, ciencia_wait_minutes=5)
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_until(harness.clock.now() + timedelta(hours=2, minutes=5))  # resNFe → Ciência → nfeProc
    before = harness.sandbox.referee.report()["requests"]
    result = harness.capture.points.reprocess_key(harness.company.id, str(nfe.key))
    assert result.status == "local"
    assert harness.sandbox.referee.report()["requests"] == before


def test_unknown_key_is_asked_once_and_reported(harness: Harness) -> None:
    key = AccessKey.build(
        uf="SP", year_month="2611", issuer=SUPPLIER, model="55", serie=1, number=999, tp_emis=1, code=12345678
    )
    result = harness.capture.points.reprocess_key(harness.company.id, key.value)
    assert result.status == "not_found"
    assert "217" in result.message
    calls = harness.ctx.audit.calls_for(
        "nfe_distribuicao", f"consChNFe:{key.value}", harness.clock.now() - timedelta(hours=1)
    )
    assert len(calls) == 1


def test_user_request_beyond_twenty_per_hour_is_told_when_it_can_run(harness: Harness) -> None:
    keys = [str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(21)]
    outcomes = []
    for key in keys:
        outcomes.append(harness.capture.points.reprocess_key(harness.company.id, key))
        harness.clock.advance(timedelta(seconds=30))
    assert [o.status for o in outcomes[:20]] == ["fetched"] * 20
    assert outcomes[20].status == "deferred"
    assert "Consulta disponível a partir de" in outcomes[20].message
    assert outcomes[20].available_at is not None
    assert outcomes[20].available_at >= harness.clock.now() + timedelta(minutes=49)
    report = harness.sandbox.referee.report()
    assert report["violations"] == []
    assert (
        harness.ctx.quota.count_since(harness.company.cnpj, Product.NFE, harness.clock.now() - timedelta(hours=1)) == 20
    )


def test_a_key_left_to_the_running_service_is_queried_by_its_recovery_dispatch(harness: Harness) -> None:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    result = harness.capture.points.reprocess_key(harness.company.id, str(nfe.key), queue=True)
    assert result.status == "deferred" and "serviço de captura em execução" in result.message
    assert harness.sandbox.referee.report()["requests"] == 0  # queued, not asked
    [gap] = harness.ctx.recoveries.due(harness.clock.now(), product=Product.NFE)
    assert gap.access_key == str(nfe.key)
    assert harness.capture.points.dispatch() == 1  # what the running service does next
    assert harness.ctx.documents.find(harness.company.id, Product.NFE, str(nfe.key)) is not None


def test_a_point_query_whose_connection_drops_is_counted_and_tried_again(harness: Harness) -> None:
    # bench_month (50 companies, PostgreSQL) met it: the ledger refused the unanswered query's row
    # (no NSU, no key) and the recovery dispatch died instead of retrying.
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.capture.points.reprocess_key(harness.company.id, str(nfe.key), queue=True)
    harness.sandbox.inject_fault("nfe_dist", "close")
    assert harness.capture.points.dispatch() == 1
    [gap] = harness.ctx.recoveries.due(harness.clock.now() + timedelta(hours=1), product=Product.NFE)
    assert gap.access_key == str(nfe.key) and gap.attempts == 1 and gap.last_error
    assert harness.ctx.documents.find(harness.company.id, Product.NFE, str(nfe.key)) is None


def test_a_point_query_answered_109_waits_the_services_pause(harness: Harness) -> None:
    # bench_month (50 companies, PostgreSQL): a recovery met a 109 and was asked again every 5
    # minutes, inside the 20-minute pause the referee enforces (query_during_outage_pause).
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.capture.points.reprocess_key(harness.company.id, str(nfe.key), queue=True)
    harness.sandbox.outage("nfe_dist", 109, harness.clock.now() + timedelta(minutes=30))
    answered = harness.clock.now()
    assert harness.capture.points.dispatch() == 1  # answered 109
    settings = harness.ctx.companies.get_settings(harness.company.id, Product.NFE)
    assert settings is not None
    pause = harness.ctx.cursors.get_pause(Product.NFE, settings.environment)
    # The same pause as the distribution's 109: 20 minutes on the service's clock, plus the margin.
    assert pause is not None and pause.paused_until > answered + timedelta(minutes=20)
    assert "paralisada (cStat 109" in pause.reason and "consultas pausadas até" in pause.reason
    for _ in range(3):  # every 5 minutes, as the scheduler's dispatch: held by the pause
        harness.clock.advance(timedelta(minutes=5))
        assert harness.capture.points.dispatch() == 0
    harness.clock.advance(timedelta(minutes=16))  # past the pause: asked again (the outage is over too)
    while harness.ctx.documents.find(harness.company.id, Product.NFE, str(nfe.key)) is None:
        assert harness.capture.points.dispatch() <= 1
        harness.clock.advance(timedelta(minutes=5))
    assert harness.sandbox.referee.report()["violations"] == []
