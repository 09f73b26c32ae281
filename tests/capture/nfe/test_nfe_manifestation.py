"""Recipient manifestation against the sandbox: automatic Ciência, manual events, NT 2018.002."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.capture.nfe.manifestation import ManifestationRefused
from app.core.manifestation import InvalidManifestation
from app.core.products import Product
from app.fiscal.xmldsig import verify_enveloped
from app.store.records import CallOutcome, DocumentKind, ManifestationStatus
from tests.capture.conftest import RECIPIENT, SUPPLIER, Harness
from tests.support.engines import harness_on_both_engines  # noqa: F401  (its "harness": both engines)


def _key(harness: Harness) -> str:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    return str(nfe.key)


def test_automatic_ciencia_releases_the_full_nfe_under_a_new_nsu(harness: Harness) -> None:
    harness.settings(auto_ciencia=True, ciencia_wait_minutes=10)
    key = _key(harness)
    start = harness.clock.now()
    harness.run_until(start + timedelta(hours=3))

    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert request.automatic and request.status is ManifestationStatus.ACCEPTED
    assert request.cstat == "135" and request.protocol
    assert request.sent_at is not None and request.sent_at - start >= timedelta(minutes=10)
    summary = harness.ctx.documents.find(harness.company.id, Product.NFE, key)
    assert summary is not None and summary.kind is DocumentKind.NFE_PROC  # upgraded, one document
    assert summary.version_count == 2  # the resNFe kept in its history
    proc = harness.ctx.manifestations.result_xml(request.id)
    assert proc is not None and b"<procEventoNFe" in proc
    verify_enveloped(proc[proc.index(b"<evento") : proc.index(b"</evento>") + 9], at=harness.clock.now())
    report = harness.sandbox.referee.report()
    assert report["violations"] == []
    assert report["companies"][RECIPIENT]["nfe"]["undelivered"] == []
    nsus = [p["nsu"] for p in report["companies"][RECIPIENT]["nfe"]["published"] if p["key"] == key]
    assert len(nsus) >= 2 and len(set(nsus)) == len(nsus)  # resNFe and nfeProc under different NSUs


def test_no_automatic_ciencia_when_the_user_already_confirmed(harness: Harness) -> None:
    harness.settings(auto_ciencia=True, ciencia_wait_minutes=30)
    key = _key(harness)
    harness.run_pending()  # the resNFe arrives; Ciência scheduled for +30 min
    harness.capture.manifestation.request(harness.company.id, key, "210200")
    harness.run_until(harness.clock.now() + timedelta(hours=2))
    by_type = {m.tp_evento: m for m in harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)}
    assert by_type["210200"].status is ManifestationStatus.ACCEPTED
    assert by_type["210210"].status is ManifestationStatus.REJECTED  # never sent
    assert by_type["210210"].sent_at is None
    assert "conclusiva" in (by_type["210210"].x_motivo or "")
    assert harness.sandbox.referee.report()["violations"] == []


def test_operacao_nao_realizada_needs_a_justification(harness: Harness) -> None:
    key = _key(harness)
    harness.run_pending()
    with pytest.raises(InvalidManifestation):
        harness.capture.manifestation.request(harness.company.id, key, "210240")
    request = harness.capture.manifestation.request(
        harness.company.id, key, "210240", "Mercadoria não foi entregue no prazo combinado."
    )
    harness.capture.manifestation.dispatch()
    [done] = [m for m in harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key) if m.id == request.id]
    assert done.status is ManifestationStatus.ACCEPTED, done.x_motivo


def test_one_rectification_of_a_conclusive_event_then_refused(harness: Harness) -> None:
    key = _key(harness)
    harness.run_pending()
    first = harness.capture.manifestation.request(harness.company.id, key, "210200")
    harness.capture.manifestation.dispatch()
    second = harness.capture.manifestation.request(harness.company.id, key, "210200")
    assert (first.n_seq_evento, second.n_seq_evento) == (1, 2)
    harness.capture.manifestation.dispatch()
    statuses = {
        m.n_seq_evento: m.status for m in harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    }
    assert statuses == {1: ManifestationStatus.ACCEPTED, 2: ManifestationStatus.ACCEPTED}
    with pytest.raises((ManifestationRefused, InvalidManifestation)):
        harness.capture.manifestation.request(harness.company.id, key, "210200")


def test_a_rejected_event_is_not_resent_within_the_hour(harness: Harness) -> None:
    key = _key(harness)
    harness.run_pending()
    harness.capture.manifestation.request(harness.company.id, key, "210240", "Operação cancelada pelo cliente final.")
    harness.capture.manifestation.dispatch()
    # Ciência after a conclusive event: the AN rejects it (655).
    harness.capture.manifestation.request(harness.company.id, key, "210210")
    harness.capture.manifestation.dispatch()
    ciencia = [
        m for m in harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key) if m.tp_evento == "210210"
    ]
    assert ciencia[0].status is ManifestationStatus.REJECTED and ciencia[0].cstat == "655"
    with pytest.raises(ManifestationRefused, match="1 de 1 tentativas"):
        harness.capture.manifestation.request(harness.company.id, key, "210210")
    report = harness.sandbox.referee.report()
    assert report["violations"] == []  # one rejection is information; a second would be misuse


def test_one_pass_sees_what_it_settled_a_confirmation_before_the_automatic_ciencia(harness: Harness) -> None:
    harness.settings(auto_ciencia=True, ciencia_wait_minutes=30)
    key = _key(harness)
    harness.run_pending()  # the resNFe arrives; Ciência scheduled for +30 min
    harness.capture.manifestation.request(harness.company.id, key, "210200")
    harness.clock.advance(timedelta(minutes=31))
    # Both due now: ONE dispatch pass sends the Confirmação, then must not send the Ciência.
    assert harness.capture.manifestation.dispatch() == 1
    by_type = {m.tp_evento: m for m in harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)}
    assert by_type["210200"].status is ManifestationStatus.ACCEPTED
    assert by_type["210210"].status is ManifestationStatus.REJECTED and by_type["210210"].sent_at is None
    assert "conclusiva" in (by_type["210210"].x_motivo or "")
    calls = harness.ctx.audit.recent_calls(company_id=harness.company.id)
    assert [c.operation for c in calls if c.service == "nfe_recepcao_evento"] == [f"ID210200{key}01"]
    assert harness.sandbox.referee.report()["violations"] == []


def test_a_communication_failure_is_logged_and_retried_after_the_backoff(harness: Harness) -> None:
    key = _key(harness)
    harness.run_pending()
    request = harness.capture.manifestation.request(harness.company.id, key, "210210")
    harness.sandbox.inject_fault("nfe_evento", "http_503")
    assert harness.capture.manifestation.dispatch() == 1
    [waiting] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert waiting.status is ManifestationStatus.PENDING and waiting.attempts == 1 and waiting.cstat is None
    assert waiting.not_before == harness.clock.now() + timedelta(minutes=1)
    [failed] = harness.ctx.audit.calls_for("nfe_recepcao_evento", f"ID210210{key}01", harness.clock.now())
    assert failed.outcome is CallOutcome.HTTP_ERROR and failed.cstat is None
    assert harness.capture.manifestation.dispatch() == 0  # not before its time
    harness.clock.advance(timedelta(minutes=1))
    assert harness.capture.manifestation.dispatch() == 1
    [done] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert done.id == request.id and done.status is ManifestationStatus.ACCEPTED and done.attempts == 2
    assert done.cstat == "135" and harness.ctx.manifestations.result_xml(done.id) is not None
    stored = harness.ctx.events.for_key(harness.company.id, Product.NFE, key)
    assert [(e.tp_evento, e.protocol) for e in stored if e.tp_evento == "210210"] == [("210210", done.protocol)]
