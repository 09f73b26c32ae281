"""The ADN client against the sandbox over mutual TLS: lots, the empty queue, events by key,
429, retries, refusals and the breaker gate (protocol.md §4.2-4.3)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.capture.nfse.adapter import BreakerBoard
from app.core.cadence_adn import AdnStatus
from app.core.products import Environment
from app.documents.nfse import NfseMeta, read_nfse
from app.fiscal.adn import (
    AdnCertificateRefused,
    AdnClient,
    AdnThrottled,
    CircuitOpen,
    may_have_reached_service,
    retry_after,
)
from app.fiscal.errors import ConnectionFailed, HttpStatusError
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    with nfse_harness(tmp_path) as harness:
        yield harness
        assert harness.sandbox.referee.violations() == []


def _client(h: Harness, board: BreakerBoard | None = None) -> AdnClient:
    a1 = h.ctx.certificates.get(h.company, h.clock.now())
    gate = board.gate(a1.sha256_fingerprint) if board is not None else None
    return AdnClient.from_factory(h.ctx.http, a1, Environment.HOMOLOGACAO, clock=h.clock, gate=gate)


def _adn_requests(h: Harness) -> list[object]:
    return [r for r in h.sandbox.referee.requests if r.service == "adn"]


def test_a_lot_then_the_404_empty_queue(h: Harness) -> None:
    published = [h.sandbox.publish_nfse(SUPPLIER, RECIPIENT) for _ in range(3)]
    client = _client(h)
    reply = client.distribution(h.company.cnpj, 0)
    assert reply.status is AdnStatus.DOCUMENTS and reply.http_status == 200
    assert [d.nsu for d in reply.documents] == [1, 2, 3]
    assert [d.key for d in reply.documents] == [p.key for p in published]
    assert all(d.doc_type == "NFSE" and d.error is None for d in reply.documents)
    assert reply.documents[0].xml == published[0].nfse  # byte-exact after base64 + gunzip
    meta = read_nfse(reply.documents[0].xml or b"")
    assert isinstance(meta, NfseMeta) and meta.taker is not None and meta.taker.doc == RECIPIENT
    assert reply.request_line == f"GET /DFe/0?cnpjConsulta={RECIPIENT}&lote=true"
    empty = client.distribution(h.company.cnpj, 3)  # the last NSU held: nothing after it
    assert (empty.status, empty.http_status, empty.documents) == (AdnStatus.NO_DOCUMENTS, 404, ())
    assert empty.error_codes == ("E2220",)
    queried = [r.summary["nsu"] for r in _adn_requests(h)]  # type: ignore[attr-defined]
    assert queried == ["0", "3"]


def test_events_of_one_nfse(h: Harness) -> None:
    note = h.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
    h.sandbox.publish_nfse_event(note, "101101", SUPPLIER)
    reply = _client(h).events(note.key)
    assert reply.status is AdnStatus.DOCUMENTS
    [event] = reply.documents
    assert (event.doc_type, event.event_type, event.key) == ("EVENTO", "CANCELAMENTO", note.key)


def test_429_hands_retry_after_to_the_caller(h: Harness) -> None:
    h.sandbox.inject_fault("adn", "http_429", cnpj=RECIPIENT, stall_seconds=90)
    with pytest.raises(AdnThrottled) as caught:
        _client(h).distribution(h.company.cnpj, 0)
    assert caught.value.retry_after == timedelta(seconds=90)
    assert len(_adn_requests(h)) == 1  # a 429 is an answer: never retried in the call


def test_retry_after_as_seconds_or_http_date() -> None:
    now = datetime(2026, 11, 2, 15, 0, tzinfo=UTC)
    assert retry_after("120", now) == timedelta(seconds=120)
    assert retry_after("Mon, 02 Nov 2026 15:05:00 GMT", now) == timedelta(minutes=5)
    assert retry_after("Mon, 02 Nov 2026 14:00:00 GMT", now) == timedelta(0)
    assert retry_after(None, now) is None and retry_after("logo", now) is None


def test_transient_failures_retried_after_1_2_and_4_seconds(h: Harness) -> None:
    h.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=4)
    start = h.clock.now()
    with pytest.raises(HttpStatusError):
        _client(h).distribution(h.company.cnpj, 0)
    assert h.clock.now() - start == timedelta(seconds=7)  # 1 + 2 + 4, on the injectable clock
    assert len(_adn_requests(h)) == 4
    h.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=1)
    reply = _client(h).distribution(h.company.cnpj, 0)
    assert reply.attempts == 2 and reply.status is AdnStatus.NO_DOCUMENTS


def test_403_is_a_certificate_refusal(h: Harness) -> None:
    h.sandbox.inject_fault("adn", "http_403", cnpj=RECIPIENT)
    with pytest.raises(AdnCertificateRefused) as caught:
        _client(h).distribution(h.company.cnpj, 0)
    assert caught.value.status == 403 and "E0403" in caught.value.message
    assert len(_adn_requests(h)) == 1


def test_the_breaker_opens_after_ten_failures_and_closes_after_a_success(h: Harness) -> None:
    board = BreakerBoard(h.clock.now)
    client = _client(h, board)
    h.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=10)
    for _ in range(2):  # 4 attempts each
        with pytest.raises(HttpStatusError):
            client.distribution(h.company.cnpj, 0)
    with pytest.raises(HttpStatusError):  # the 10th failure opens it: the call stops retrying
        client.distribution(h.company.cnpj, 0)
    assert len(_adn_requests(h)) == 10
    opened_at = h.clock.now()
    with pytest.raises(CircuitOpen) as caught:
        client.distribution(h.company.cnpj, 0)
    assert caught.value.until == opened_at + timedelta(seconds=60)
    assert "Disjuntor aberto" in caught.value.message
    assert len(_adn_requests(h)) == 10  # held: nothing reached the ADN
    h.clock.set(caught.value.until)
    assert client.distribution(h.company.cnpj, 0).status is AdnStatus.NO_DOCUMENTS  # the trial succeeds
    fingerprint = h.ctx.certificates.get(h.company, h.clock.now()).sha256_fingerprint
    assert board.state.certificate(fingerprint).failures == 0 and board.open_until(fingerprint) is None


def test_a_lost_answer_is_not_retried_in_the_call(h: Harness) -> None:
    h.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
    h.sandbox.inject_fault("adn", "close", cnpj=RECIPIENT)  # the ADN answered, the connection dropped
    with pytest.raises(ConnectionFailed) as caught:
        _client(h).distribution(h.company.cnpj, 0)
    assert may_have_reached_service(caught.value)
    assert len(_adn_requests(h)) == 1
