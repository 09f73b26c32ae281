"""NFS-e distribution (ADN) against the sandbox: real mutual TLS, virtual clock, the referee as judge.

Each rule of seed 000 §6.2-6.4 and §6.7 on the shared engine: lots chained 1 s apart up to 50 a
run, 404 NENHUM_DOCUMENTO_LOCALIZADO as an empty queue and the hour after it, 429 with and
without Retry-After, REJEICAO with and without captured lots, transient failures retried then
rescheduled, ten certificate refusals, the delivery rules (cutoff, own-issued), cancellations,
quarantine, and the daily gap check. Every test ends with no referee violation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree
from sqlalchemy import text

from app.capture.context import CaptureNotice
from app.core.cadence import Action
from app.core.clock import BRASILIA
from app.core.documents import Direction, DocumentStatus, PartyRole
from app.core.products import Product
from app.store.nfse import NfseRepository
from app.store.records import DocumentKind, Withheld
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness

_SPED = "http://www.sped.fazenda.gov.br/nfse"

PRODUCT = Product.NFSE
OTHER = "44555666000181"


@pytest.fixture
def nfse(tmp_path: Path, office_database: str | None) -> Iterator[Harness]:
    with nfse_harness(tmp_path, database=office_database) as h:  # on both engines
        h.sandbox.party(OTHER)
        yield h
        assert h.sandbox.referee.violations() == []


def _publish(h: Harness, count: int = 1, *, provider: str = SUPPLIER, taker: str | None = RECIPIENT,
             days_ago: float = 0, **options: object) -> list[object]:  # fmt: skip
    at = h.clock.now() - timedelta(days=days_ago)
    return [h.sandbox.publish_nfse(provider, taker, at=at - timedelta(minutes=i), **options) for i in range(count)]


def _adn_calls(h: Harness) -> list[object]:
    return [r for r in h.sandbox.referee.requests if r.service == "adn" and not r.competitor]


def _state(h: Harness):  # type: ignore[no-untyped-def]
    return h.ctx.cursors.get(h.company.id, PRODUCT)


def _notices(h: Harness) -> list[CaptureNotice]:
    seen: list[CaptureNotice] = []
    h.ctx.listeners.append(seen.append)
    return seen


def test_distribution_stores_parties_details_and_waits_an_hour_after_the_404(nfse: Harness) -> None:
    notices = _notices(nfse)
    [received] = _publish(nfse, provider=SUPPLIER, taker=RECIPIENT, with_ibscbs=True, service_cents=123_456)
    _publish(nfse, 2, provider=OTHER, taker=RECIPIENT, intermediary=SUPPLIER)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    # one lot with the three NFS-e, then the 404 that ends the queue, in the same run
    assert (result.queries, result.documents) == (2, 3)
    statuses = [(r.http_status, r.summary.get("status")) for r in _adn_calls(nfse)]  # type: ignore[attr-defined]
    assert statuses == [(200, "DOCUMENTOS_LOCALIZADOS"), (404, "NENHUM_DOCUMENTO_LOCALIZADO")]
    state = _state(nfse)
    assert state.ult_nsu == nfse.sandbox.max_nsu("nfse", RECIPIENT) == 3
    assert result.decision.action is Action.WAIT
    assert state.next_query_at is not None and state.next_query_at - nfse.clock.now() >= timedelta(hours=1)
    assert "nenhum documento localizado" in (state.wait_reason or "")
    found = nfse.ctx.documents.find(nfse.company.id, PRODUCT, received.key)  # type: ignore[attr-defined]
    assert found is not None and found.kind is DocumentKind.NFSE and found.status is DocumentStatus.AUTHORISED
    assert (found.emitter_id, found.recipient_id, found.total_cents) == (SUPPLIER, RECIPIENT, 123_456)
    assert found.direction is Direction.RECEIVED
    details = NfseRepository(nfse.ctx.db).details(found.id)
    assert details is not None and details.withheld is None
    assert details.service_cents == 123_456 and details.iss_cents == round(123_456 * 0.05)
    # IBS and CBS at the rates the sandbox drew for this NFS-e (2026's or 2027-2028's), as its XML says
    totals = etree.fromstring(received.nfse).find(f"{{{_SPED}}}infNFSe/{{{_SPED}}}IBSCBS/{{{_SPED}}}totCIBS")  # type: ignore[attr-defined]
    cbs, ibs = (round(Decimal(totals.findtext(f".//{{{_SPED}}}{tag}")) * 100) for tag in ("vCBS", "vIBSTot"))
    assert (details.cbs_cents, details.ibs_cents) == (cbs, ibs) and cbs > 0
    assert details.national_code and len(details.national_code) == 6 and details.nbs
    roles = {p.role for p in nfse.ctx.documents.parties(found.id)}
    assert roles == {PartyRole.EMITTER, PartyRole.TAKER}
    assert [n.count for n in notices if n.kind == "documents"] == [3]
    # calls logged like the SOAP ones: operation, HTTP status and the ADN's code
    calls = [(c.operation, c.http_status, c.cstat) for c in reversed(nfse.ctx.audit.recent_calls(10))]
    assert calls == [("GET /DFe", 200, "200"), ("GET /DFe", 404, "E2220")]
    # no query before the hour; right after it, one
    nfse.clock.advance(timedelta(minutes=59))
    assert nfse.capture.distribution.due(nfse.clock.now()) == []
    nfse.clock.set(state.next_query_at)
    assert nfse.capture.distribution.run_company(nfse.company.id).queries == 1
    assert len(_adn_calls(nfse)) == 3


def test_lots_chain_one_second_apart_up_to_fifty_a_run(nfse: Harness) -> None:
    _publish(nfse, 120)
    start = nfse.clock.now()
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert (result.queries, result.documents) == (4, 120)  # 50 + 50 + 20, then the 404
    times = [r.at for r in _adn_calls(nfse)]  # type: ignore[attr-defined]
    assert all(later - earlier >= timedelta(seconds=1) for earlier, later in itertools.pairwise(times))
    assert times[0] == start
    assert nfse.stored_nsus() == list(range(1, 121))


def test_a_backlog_continues_on_the_next_cycle_after_fifty_lots(nfse: Harness) -> None:
    _publish(nfse, 50 * 50 + 10, days_ago=1)
    first = nfse.capture.distribution.run_company(nfse.company.id)
    assert (first.queries, first.documents) == (50, 2500)
    state = _state(nfse)
    assert state.ult_nsu == 2500 and state.wait_reason == "Continua no próximo ciclo."
    nfse.clock.advance(timedelta(seconds=30))
    second = nfse.capture.distribution.run_company(nfse.company.id)
    assert (second.queries, second.documents) == (2, 10)


@pytest.mark.parametrize(("kind", "wait"), [("http_429", 120), ("http_429_date", 300), ("http_429_bare", 3600)])
def test_429_waits_retry_after_or_an_hour(nfse: Harness, kind: str, wait: int) -> None:
    _publish(nfse, 2)
    nfse.sandbox.inject_fault("adn", kind, cnpj=RECIPIENT, stall_seconds=wait)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert result.queries == 1 and result.documents == 0
    state = _state(nfse)
    assert result.decision.action is Action.BLOCKED and state.last_cstat == "429"
    assert state.blocked_until is not None
    waited = state.blocked_until - nfse.clock.now()
    assert timedelta(seconds=wait) <= waited <= timedelta(seconds=wait + 2)
    nfse.clock.set(state.blocked_until - timedelta(seconds=1))
    assert nfse.capture.distribution.due(nfse.clock.now()) == []
    nfse.clock.set(state.blocked_until)
    assert nfse.capture.distribution.run_company(nfse.company.id).documents == 2


def test_rejeicao_without_captured_lots_waits_ten_minutes_and_is_logged(nfse: Harness) -> None:
    _publish(nfse, 1)
    nfse.sandbox.inject_fault("adn", "rejeicao", cnpj=RECIPIENT)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    state = _state(nfse)
    assert (result.queries, result.documents, state.last_cstat) == (1, 0, "E2230")
    assert state.next_query_at == nfse.clock.now() + timedelta(minutes=10)
    assert "E2230" in (state.wait_reason or "") and "rejeitou" in (state.wait_reason or "")
    [call] = nfse.ctx.audit.recent_calls(1)
    assert call.outcome.value == "rejected" and "E2230" in (call.error_text or "")
    nfse.clock.advance(timedelta(minutes=10))
    assert nfse.capture.distribution.run_company(nfse.company.id).documents == 1


def test_rejeicao_after_captured_lots_retries_on_the_next_cycle(nfse: Harness) -> None:
    _publish(nfse, 60)
    engine = nfse.capture.distribution

    def after_lot(company_id: int) -> bool:
        nfse.sandbox.inject_fault("adn", "rejeicao", cnpj=RECIPIENT)
        engine.lot_done = None
        return True

    engine.lot_done = after_lot
    result = engine.run_company(nfse.company.id)
    assert (result.queries, result.documents) == (2, 50)
    state = _state(nfse)
    assert state.ult_nsu == 50
    assert state.next_query_at == nfse.clock.now() + timedelta(seconds=30)  # the next cycle, not 10 min
    nfse.clock.advance(timedelta(seconds=30))
    assert engine.run_company(nfse.company.id).documents == 10


def test_transient_failures_are_retried_in_the_call_then_rescheduled(nfse: Harness) -> None:
    _publish(nfse, 3)
    nfse.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=2)
    start = nfse.clock.now()
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert result.documents == 3  # the third attempt, 1 + 2 s later, got the lot
    assert nfse.clock.now() - start >= timedelta(seconds=3)
    [first] = [c for c in nfse.ctx.audit.recent_calls(10) if c.http_status == 200]
    assert first.operation == "GET /DFe"
    nfse.clock.advance(timedelta(hours=2))
    nfse.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=4)
    failed = nfse.capture.distribution.run_company(nfse.company.id)
    assert failed.documents == 0
    state = _state(nfse)
    assert state.consecutive_failures == 1
    assert state.next_query_at is not None
    assert timedelta(seconds=59) <= state.next_query_at - nfse.clock.now() <= timedelta(minutes=1)
    assert "Falha de comunicação" in (state.wait_reason or "")


def test_ten_certificate_refusals_disable_the_company_and_say_why(nfse: Harness) -> None:
    notices = _notices(nfse)
    nfse.sandbox.inject_fault("adn", "http_403", cnpj=RECIPIENT, count=10)
    for attempt in range(1, 11):
        result = nfse.capture.distribution.run_company(nfse.company.id)
        assert result.queries == 1
        state = _state(nfse)
        assert state.consecutive_failures == attempt
        if attempt < 10:
            assert state.disabled_reason is None and state.next_query_at is not None
            nfse.clock.set(state.next_query_at)
    assert result.decision.action is Action.DISABLED
    assert "recusou o certificado 10 vezes" in (state.disabled_reason or "")
    assert any(n.kind == "alert" and "desativada" in n.message for n in notices)
    nfse.clock.advance(timedelta(hours=2))
    assert nfse.capture.distribution.run_company(nfse.company.id).queries == 0  # stays off until resumed
    assert len(_adn_calls(nfse)) == 10


def test_delivery_rules_cutoff_and_own_issued(nfse: Harness) -> None:
    nfse.settings(nfse_cutoff_date=date(2026, 11, 1))
    [old] = _publish(nfse, days_ago=5)  # before the cutoff
    [own] = _publish(nfse, provider=RECIPIENT, taker=SUPPLIER)  # the company is only the prestador
    [to_self] = _publish(nfse, provider=RECIPIENT, taker=RECIPIENT)  # prestador and tomador
    notices = _notices(nfse)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert result.documents == 3
    repo = NfseRepository(nfse.ctx.db)
    by_key = {
        doc.key: nfse.ctx.documents.find(nfse.company.id, PRODUCT, doc.key)  # type: ignore[attr-defined]
        for doc in (old, own, to_self)
    }
    withheld = {key: repo.details(found.id).withheld for key, found in by_key.items()}  # type: ignore[union-attr]
    assert withheld == {old.key: Withheld.CUTOFF, own.key: Withheld.OWN_ISSUED, to_self.key: None}  # type: ignore[attr-defined]
    assert by_key[own.key].direction is Direction.EMITTED  # type: ignore[attr-defined, union-attr]
    assert by_key[to_self.key].direction is Direction.RECEIVED  # type: ignore[attr-defined, union-attr]
    assert [n.count for n in notices if n.kind == "documents"] == [1]
    assert repo.withheld_counts(nfse.company.id) == {Withheld.CUTOFF: 1, Withheld.OWN_ISSUED: 1}
    assert repo.release(nfse.company.id, Withheld.CUTOFF) == 1
    assert repo.withheld_counts(nfse.company.id) == {Withheld.OWN_ISSUED: 1}


def test_cancellation_and_substitution_link_to_their_nfse(nfse: Harness) -> None:
    [note] = _publish(nfse, provider=SUPPLIER)
    nfse.capture.distribution.run_company(nfse.company.id)
    nfse.clock.advance(timedelta(hours=2))
    nfse.sandbox.publish_nfse_event(note, "101101", SUPPLIER)
    nfse.capture.distribution.run_company(nfse.company.id)
    found = nfse.ctx.documents.find(nfse.company.id, PRODUCT, note.key)  # type: ignore[attr-defined]
    assert found is not None and found.status is DocumentStatus.CANCELLED
    [event] = nfse.ctx.events.for_key(nfse.company.id, PRODUCT, note.key)  # type: ignore[attr-defined]
    assert (event.tp_evento, event.author_id) == ("101101", SUPPLIER)


def test_corrupt_and_malformed_payloads_are_quarantined_with_a_message(nfse: Harness) -> None:
    _publish(nfse, 3)
    nfse.sandbox.inject_fault("adn", "corrupt_gzip", cnpj=RECIPIENT)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert (result.documents, result.quarantined) == (2, 1)
    with nfse.ctx.db.read_connection() as connection:
        errors = connection.execute(
            text(
                "SELECT parse_error FROM documents WHERE product = 'nfse' AND quarantined"
            )  # portable: a boolean on both
        ).all()
    assert len(errors) == 1 and "gzip" in errors[0][0]
    assert _state(nfse).ult_nsu == 3  # nothing lost: the cursor passed it, the bytes are kept


def test_daily_gap_check_restarts_before_the_first_hole(nfse: Harness) -> None:
    _publish(nfse, 6)
    nfse.capture.distribution.run_company(nfse.company.id)
    with nfse.ctx.db.write_connection() as connection:  # a lost write: NSU 3 never persisted
        connection.execute(text("DELETE FROM distribution_items WHERE product = 'nfse' AND nsu = 3"))
    assert nfse.stored_nsus() == [1, 2, 4, 5, 6]
    assert nfse.capture.points.daily_gap_check() == 1
    state = _state(nfse)
    assert state.ult_nsu == 2 and state.next_query_at is not None  # the hour after the 404 still holds
    nfse.clock.set(state.next_query_at)
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert result.documents == 4  # 3..6 again: 3 stored, the rest absorbed by idempotency
    assert nfse.stored_nsus() == [1, 2, 3, 4, 5, 6]
    with nfse.ctx.db.read_connection() as connection:
        count = connection.execute(text("SELECT count(*) FROM documents WHERE product = 'nfse'")).scalar_one()
    assert count == 6
    assert nfse.capture.points.daily_gap_check() == 0


def test_the_daily_check_runs_at_23h_brasilia(nfse: Harness) -> None:
    evening = datetime.combine(nfse.clock.now().astimezone(BRASILIA).date(), time(22, 50), BRASILIA)
    nfse.clock.set(evening)
    _publish(nfse, 3)
    nfse.run_pending()  # NSU 1..3, then the 404 and its hour
    with nfse.ctx.db.write_connection() as connection:  # a lost write: NSU 2 never persisted
        connection.execute(text("DELETE FROM distribution_items WHERE product = 'nfse' AND nsu = 2"))
    nfse.run_until(evening + timedelta(minutes=20))
    runs = nfse.ctx.runs.recent(100)
    checks = [r.started_at.astimezone(BRASILIA) for r in runs if r.job_type == "verificacao_diaria"]
    assert [(c.hour, c.minute) for c in checks] == [(23, 0)]
    assert _state(nfse).ult_nsu == 1  # the check found the hole and restarts before it
