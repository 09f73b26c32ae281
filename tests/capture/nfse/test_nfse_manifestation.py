"""NFS-e taker manifestation (rule book §6.5) against the sandbox's Sefin Nacional over mutual TLS:
registered and stored as the key's event, a rejection with its reason, the seed-004 guard against
repeating a rejected pedido, and the refusals before anything is signed or sent.

Requests are made as the window and the command line make them: through the desk (``Desk.manifest``),
which queues them with :class:`NfseManifestationService` and sends them at once (``app.desk.sending``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.context import CaptureNotice
from app.capture.nfse.fetch import NfseFetch
from app.capture.nfse.manifestation import NfseManifestationService, TakerManifestationRefused
from app.core.ids import Cnpj
from app.core.keys import NfseKey
from app.core.products import Environment, Product
from app.core.taker import CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR, RejectionReason
from app.desk import Desk
from app.desk.views import ManifestationOutcome
from app.safexml import parse_xml
from app.store.records import ManifestationStatus
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, product_harness

NS = "{http://www.sped.fazenda.gov.br/nfse}"
REASON = "Serviço não prestado: contrato encerrado em outubro"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFSE) as h:
        yield h


@pytest.fixture
def desk(harness: Harness) -> Iterator[Desk]:
    """The window's and the command line's way in: sends at once (nobody else captures here)."""
    desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    desk.open()
    try:
        yield desk
    finally:
        desk.close()


@pytest.fixture
def notices(desk: Desk) -> list[CaptureNotice]:
    seen: list[CaptureNotice] = []
    desk.subscribe(seen.append)
    return seen


def _status(outcome: ManifestationOutcome) -> str:
    """What the request came to: "accepted", "pending", "refused" (nothing sent) or "rejected"."""
    if outcome.accepted:
        return "accepted"
    if outcome.pending:
        return "pending"
    return "refused" if outcome.refused else "rejected"


def _captured(harness: Harness, *published: dict[str, str]) -> list[str]:
    """NFS-e published at the sandbox (default: SUPPLIER to the company) and captured by the
    company's ADN distribution, in one run."""
    keys = [str(harness.sandbox.publish_nfse(**parties).key) for parties in published or [{}]]
    harness.run_pending()
    for key in keys:
        assert harness.ctx.documents.find(harness.company.id, Product.NFSE, key) is not None
    return keys


def _mine(harness: Harness) -> str:
    [key] = _captured(harness, {"provider": SUPPLIER, "taker": RECIPIENT})
    return key


def _posts(harness: Harness) -> list[int]:
    return [
        r.http_status
        for r in harness.sandbox.referee.requests
        if r.service == "sefin" and r.operation.startswith("POST")
    ]


def test_confirmation_is_registered_stored_linked_and_not_repeated_by_distribution(
    harness: Harness, desk: Desk, notices: list[CaptureNotice]
) -> None:
    key = _mine(harness)
    outcome = desk.manifest(harness.company.id, key, CONFIRMACAO_TOMADOR)
    assert outcome.accepted, outcome.message
    assert outcome.message.startswith("Confirmação do Tomador registrada")
    assert _posts(harness) == [201]
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.ACCEPTED and request.attempts == 1 and not request.automatic
    evento = harness.ctx.manifestations.result_xml(request.id)
    assert evento is not None and parse_xml(evento).tag == f"{NS}evento"
    [event] = harness.ctx.events.for_key(harness.company.id, Product.NFSE, key)  # linked to its NFS-e by key
    assert event.tp_evento == CONFIRMACAO_TOMADOR and event.nsu is None
    assert [n.message for n in notices if n.kind == "manifestation"] == [
        "Confirmação do Tomador registrada na Sefin Nacional."
    ]
    # The ADN then distributes the same evento: recognised, not a second event.
    harness.run_until(harness.clock.now() + timedelta(hours=1, minutes=5))
    [event] = harness.ctx.events.for_key(harness.company.id, Product.NFSE, key)
    assert harness.stored_nsus() == [1, 2]  # the NFS-e, then its evento: NSU recorded on the same event
    again = desk.manifest(harness.company.id, key, REJEICAO_TOMADOR, reason_code="9", justification=REASON)
    assert _status(again) == "refused" and "já registrada" in again.message
    assert _posts(harness) == [201]
    assert harness.sandbox.referee.report()["violations"] == []


def test_a_registered_rejection_keeps_its_reason(harness: Harness, desk: Desk) -> None:
    key = _mine(harness)
    service = NfseManifestationService(harness.ctx)
    outcome = desk.manifest(harness.company.id, key, REJEICAO_TOMADOR, reason_code="5", justification=REASON)
    assert outcome.accepted, outcome.message
    [view] = service.view(harness.company.id, key)
    assert view.label == "Rejeição do Tomador" and view.reason == RejectionReason("5", REASON)
    evento = harness.ctx.manifestations.result_xml(view.request.id)
    assert evento is not None
    ped = parse_xml(evento).find(f".//{NS}pedRegEvento/{NS}infPedReg")
    assert ped is not None and ped.get("Id") == f"PRE{key}{REJEICAO_TOMADOR}"
    assert ped.findtext(f"{NS}e203206/{NS}cMotivo") == "5" and ped.findtext(f"{NS}e203206/{NS}xMotivo") == REASON


def test_a_rejected_pedido_is_shown_with_its_reason_and_not_sent_again_within_the_hour(
    harness: Harness, desk: Desk, notices: list[CaptureNotice]
) -> None:
    key = _mine(harness)
    # Another system of the company already confirmed it at the Sefin: ours is refused (E1833).
    harness.sandbox.publish_nfse_event(key, CONFIRMACAO_TOMADOR, author=RECIPIENT)
    service = NfseManifestationService(harness.ctx)
    outcome = desk.manifest(harness.company.id, key, REJEICAO_TOMADOR, reason_code="9", justification=REASON)
    assert _status(outcome) == "rejected"
    assert "E1833" in outcome.message and "já existe uma manifestação do tomador" in outcome.message
    assert outcome.attempts.startswith("1 de 1 tentativas; nova tentativa a partir de")
    assert any(n.kind == "manifestation" and "rejeitada" in n.message for n in notices)
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.REJECTED and request.cstat == "E1833"

    with pytest.raises(TakerManifestationRefused, match="rejeitada pela Sefin Nacional na última hora"):
        service.request(harness.company.id, key, REJEICAO_TOMADOR, "9", REASON)
    assert _posts(harness) == [400]  # the identical pedido was never sent again
    assert harness.sandbox.referee.report()["violations"] == []

    harness.clock.advance(timedelta(hours=1, minutes=1))
    assert service.attempts(key, REJEICAO_TOMADOR, harness.clock.now()).allowed
    reopened = service.request(harness.company.id, key, REJEICAO_TOMADOR, "9", REASON)
    assert reopened.id == request.id and reopened.status is ManifestationStatus.PENDING


def test_refusals_before_anything_is_signed_or_sent(harness: Harness, desk: Desk) -> None:
    service = NfseManifestationService(harness.ctx)
    own, other_taker, mine = _captured(
        harness,
        {"provider": RECIPIENT, "taker": SUPPLIER},
        {"provider": SUPPLIER, "taker": CARRIER, "intermediary": RECIPIENT},
        {"provider": SUPPLIER, "taker": RECIPIENT},
    )
    cid = harness.company.id
    cases = [
        (own, CONFIRMACAO_TOMADOR, None, None, "própria empresa"),
        (other_taker, CONFIRMACAO_TOMADOR, None, None, "não é a tomadora"),
        (mine, REJEICAO_TOMADOR, None, REASON, "motivo da rejeição"),
        (mine, REJEICAO_TOMADOR, "9", "curto demais", "15 a 255"),
        (mine, REJEICAO_TOMADOR, "7", REASON, "motivo da rejeição"),
        (mine, CONFIRMACAO_TOMADOR, "9", REASON, "não aceita motivo"),
        (mine[:-1] + str((int(mine[-1]) + 1) % 10), CONFIRMACAO_TOMADOR, None, None, "dígito verificador"),
    ]
    for key, tp, code, text, expected in cases:
        outcome = desk.manifest(cid, key, tp, reason_code=code, justification=text)
        assert _status(outcome) == "refused" and expected in outcome.message, (key, tp, outcome.message)
    # An event code that is no taker's (the desk would read 210200 as the NF-e's Confirmação).
    with pytest.raises(TakerManifestationRefused, match="203202 ou 203206"):
        service.request(cid, mine, "210200")
    unknown = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed=SUPPLIER, number=77, year_month="2611", code=5)
    outcome = desk.manifest(cid, unknown.value, CONFIRMACAO_TOMADOR)
    assert _status(outcome) == "refused" and "documents fetch" in outcome.message
    for key in (own, other_taker, mine):
        assert harness.ctx.manifestations.for_key(cid, Product.NFSE, key) == []
    assert _posts(harness) == []


def test_a_certificate_of_another_cnpj_than_the_takers_is_refused(harness: Harness, desk: Desk) -> None:
    branch = "11222333000262"  # same base as the certificate's CNPJ (11222333000181)
    cert = harness.sandbox.companies[RECIPIENT]
    company = harness.office.register_company(
        cert.pfx, cert.password, cnpj=Cnpj(branch), environment=Environment.HOMOLOGACAO, products=(Product.NFSE,)
    )
    key = str(harness.sandbox.publish_nfse(provider=SUPPLIER, taker=branch).key)
    assert NfseFetch(harness.ctx).fetch(company.id, key).status == "fetched"
    outcome = desk.manifest(company.id, key, CONFIRMACAO_TOMADOR)
    assert _status(outcome) == "refused" and "certificado" in outcome.message and RECIPIENT in outcome.message
    assert _posts(harness) == []


def test_without_an_answer_it_stays_pending_and_is_sent_later(harness: Harness, desk: Desk) -> None:
    key = _mine(harness)
    harness.sandbox.outage("sefin", 108, harness.clock.now() + timedelta(seconds=30))
    service = NfseManifestationService(harness.ctx)
    outcome = desk.manifest(harness.company.id, key, CONFIRMACAO_TOMADOR)
    assert _status(outcome) == "pending" and "pendente" in outcome.message
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.PENDING and request.not_before == harness.clock.now() + timedelta(
        minutes=1
    )
    assert service.next_due_at() == request.not_before
    assert service.dispatch() == 0  # not due yet
    harness.clock.advance(timedelta(minutes=1))
    assert service.dispatch() == 1
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.ACCEPTED and request.attempts == 2
    assert _posts(harness) == [503, 201]
