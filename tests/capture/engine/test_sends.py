"""``settle_unanswered`` / ``settle_unsent``: every product's event sends without an answer, in SQLite."""

from __future__ import annotations

from datetime import timedelta

from app.capture.engine.sends import settle_unanswered, settle_unsent
from app.core.manifestation import MAX_EVENT_SENDS
from app.core.products import Product
from app.store.records import Manifestation, ManifestationStatus
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _request(harness: Harness) -> Manifestation:
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    return harness.ctx.manifestations.request(
        harness.company.id, Product.NFE, key, "210210", not_before=harness.clock.now()
    )


def _sent(harness: Harness, request: Manifestation) -> Manifestation:
    """The request claimed for a send (its row's attempts + 1) as a dispatcher does before the
    call; the dispatcher settles the request as it read it before the claim."""
    assert harness.ctx.manifestations.claim(request.id)
    return request


def _reread(harness: Harness, request: Manifestation) -> Manifestation:
    [row] = harness.ctx.manifestations.for_key(request.company_id, request.product, request.access_key)
    return row


def test_a_first_unanswered_send_is_pending_again_a_minute_later(harness: Harness) -> None:
    request = _sent(harness, _request(harness))
    now = harness.clock.now()
    with harness.ctx.unit() as unit:
        status = settle_unanswered(unit, request, "Tempo esgotado.", now)
    assert status is ManifestationStatus.PENDING
    row = _reread(harness, request)
    assert (row.status, row.x_motivo, row.not_before) == (
        ManifestationStatus.PENDING,
        "Tempo esgotado.",
        now + timedelta(minutes=1),
    )
    assert harness.ctx.manifestations.due(now) == []
    assert [m.id for m in harness.ctx.manifestations.due(now + timedelta(minutes=1))] == [request.id]


def test_the_wait_doubles_and_the_last_send_ends_rejected(harness: Harness) -> None:
    request = _request(harness)
    waits = []
    for _ in range(MAX_EVENT_SENDS):
        request = _sent(harness, request)
        now = harness.clock.now()
        with harness.ctx.unit() as unit:
            status = settle_unanswered(unit, request, "Falha de comunicação.", now)
        request = _reread(harness, request)
        if status is ManifestationStatus.REJECTED:
            break
        waits.append(request.not_before - now)
        harness.clock.set(request.not_before)
    minutes = [int(w.total_seconds() // 60) for w in waits]
    assert minutes == [1, 2, 4, 8, 16, 30, 30]  # doubling, capped at 30
    assert request.status is ManifestationStatus.REJECTED and request.attempts == MAX_EVENT_SENDS
    assert harness.ctx.manifestations.due(harness.clock.now() + timedelta(days=1)) == []


def test_a_failure_retrying_cannot_cure_is_rejected_at_once(harness: Harness) -> None:
    request = _sent(harness, _request(harness))
    with harness.ctx.unit() as unit:
        status = settle_unanswered(unit, request, "Certificado recusado (TLS).", harness.clock.now(), retryable=False)
    assert status is ManifestationStatus.REJECTED
    row = _reread(harness, request)
    assert (row.status, row.x_motivo, row.attempts) == (ManifestationStatus.REJECTED, "Certificado recusado (TLS).", 1)


def test_a_request_settled_without_sending_keeps_its_reason_and_wait(harness: Harness) -> None:
    request = _request(harness)
    later = harness.clock.now() + timedelta(minutes=20)
    settle_unsent(
        harness.ctx, request, ManifestationStatus.PENDING, cstat=None, x_motivo="Aguardando a cota.", retry_at=later
    )
    row = _reread(harness, request)
    assert (row.status, row.x_motivo, row.not_before, row.attempts) == (
        ManifestationStatus.PENDING,
        "Aguardando a cota.",
        later,
        0,
    )
    settle_unsent(harness.ctx, request, ManifestationStatus.REJECTED, cstat="596", x_motivo="Evento fora do prazo.")
    row = _reread(harness, request)
    assert (row.status, row.cstat, row.not_before) == (ManifestationStatus.REJECTED, "596", later)
