"""NFS-e certificate rules against the sandbox over real mutual TLS (rule book §6.3 items 3, 9, 10):
a certificate the ADN refuses at the TLS handshake counts ten times and stops the company's NFS-e
capture with the reason; an open breaker holds the calls without reaching the ADN, and closes
again after its 60 seconds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.engine import RunSoFar
from app.core.cadence import Action
from app.core.products import Environment, Product
from app.sandbox.pki import TestPki
from app.store.records import CaptureSettings, Company
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness

STRANGER = "44555666000181"


@pytest.fixture
def nfse(tmp_path: Path) -> Iterator[Harness]:
    with nfse_harness(tmp_path) as h:
        yield h
        assert h.sandbox.referee.violations() == []


def _stranger(h: Harness) -> Company:
    """A company whose A1 comes from a CA the ADN does not trust: its handshake is refused."""
    foreign = TestPki.create(now=h.clock.now()).company_cert(STRANGER, "EMPRESA DE OUTRA AC LTDA")
    company = h.office.register_company(
        foreign.pfx, foreign.password, environment=Environment.HOMOLOGACAO, products=(Product.NFSE,)
    )
    h.office.companies.save_settings(CaptureSettings(company.id, Product.NFSE, environment=Environment.HOMOLOGACAO))
    return company


def test_ten_refused_handshakes_stop_the_company_with_the_reason(nfse: Harness) -> None:
    company = _stranger(nfse)
    engine = nfse.capture.distribution
    for attempt in range(1, 11):
        result = engine.run_company(company.id)
        state = nfse.ctx.cursors.get(company.id, Product.NFSE)
        assert result.queries == 1 and state.consecutive_failures == attempt
        if attempt < 10:
            assert state.next_query_at is not None
            nfse.clock.set(state.next_query_at)
    assert result.decision.action is Action.DISABLED
    assert "recusou o certificado 10 vezes" in (state.disabled_reason or "")
    assert "certificado" in (state.last_message or "")
    # the other company, with its own certificate, is not held by this one's breaker
    nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
    assert engine.run_company(nfse.company.id).documents == 1


def test_an_open_breaker_holds_the_call_and_closes_after_sixty_seconds(nfse: Harness) -> None:
    adapter = nfse.capture.adapter
    settings = nfse.office.companies.get_settings(nfse.company.id, Product.NFSE)
    assert settings is not None
    nfse.sandbox.inject_fault("adn", "http_503", cnpj=RECIPIENT, count=10)
    nfse.capture.distribution.run_company(nfse.company.id)  # 4 attempts
    for _ in range(2):  # 8, then 10: the breaker opens and the call stops retrying
        state = nfse.ctx.cursors.get(nfse.company.id, Product.NFSE)
        nfse.clock.set(state.next_query_at)  # type: ignore[arg-type]
        nfse.capture.distribution.run_company(nfse.company.id)
    adn = [r for r in nfse.sandbox.referee.requests if r.service == "adn"]
    assert len(adn) == 10
    # as a run would see it if its own wait had passed within the breaker's minute
    state = replace(nfse.ctx.cursors.get(nfse.company.id, Product.NFSE), next_query_at=None, wait_reason=None)
    held = adapter.query(nfse.company, settings, state, RunSoFar())
    assert held.outcome is None and not held.items  # no call, nothing logged
    assert "Disjuntor aberto" in (held.transition.state.wait_reason or "")
    assert held.transition.state.next_query_at == nfse.clock.now() + timedelta(seconds=60)
    assert len([r for r in nfse.sandbox.referee.requests if r.service == "adn"]) == 10
    nfse.clock.advance(timedelta(seconds=60))
    nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
    answer = adapter.query(nfse.company, settings, state, RunSoFar())
    assert answer.outcome is not None and len(answer.items) == 1  # the trial call went and closed it


def test_an_expired_certificate_waits_an_hour_with_the_company_kept_active(nfse: Harness) -> None:
    nfse.clock.advance(timedelta(days=3 * 365))  # the test A1 has expired by then
    result = nfse.capture.distribution.run_company(nfse.company.id)
    assert result.queries == 0 and result.decision.action is Action.WAIT
    assert result.decision.until == nfse.clock.now() + timedelta(hours=1)
    assert "Certificado indisponível" in result.decision.reason
    settings = nfse.office.companies.get_settings(nfse.company.id, Product.NFSE)
    assert settings is not None and settings.enabled  # kept active: it resumes by itself
    assert [r for r in nfse.sandbox.referee.requests if r.service == "adn"] == []
