"""The capture dashboard's data over a real capture: states, progress, the call log, the gap
ledger, documents per month, and "Consultar agora" obeying every wait."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from app.core.cadence import Action
from app.core.products import Product
from app.desk import Desk, dashboard
from app.store.records import CallOutcome, GapStatus
from tests.conftest import wait_until
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT, SUPPLIER


@pytest.fixture
def capturing(office: Office) -> Iterator[Desk]:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, owner="teste")
    assert not desk.open().read_only
    try:
        wait_until(lambda: any(line.last_answer != "-" for line in desk.dashboard.lines()))  # its first pass
        yield desk
    finally:
        desk.close()


def test_lines_show_state_last_answer_and_nsu_progress(office: Office, desk: Desk) -> None:
    [line] = [ln for ln in desk.dashboard.lines() if ln.product is Product.NFE]
    assert line.name == "DESTINATARIA EXEMPLO LTDA"
    assert line.action is Action.WAIT and line.state.startswith("Em espera até")
    assert line.until is not None and line.until > desk.now()
    assert line.last_answer.startswith("137") or line.last_answer.startswith("138")
    assert line.ult_nsu == line.max_nsu > 0 and not line.loading
    assert line.progress_text.startswith("100%")


def test_call_log_lists_every_government_call_newest_first(office: Office, desk: Desk) -> None:
    calls = desk.dashboard.calls()
    assert len(calls) >= 2
    assert [c.at for c in calls] == sorted((c.at for c in calls), reverse=True)
    assert all(c.company == "DESTINATARIA EXEMPLO LTDA" and c.outcome is CallOutcome.OK for c in calls)
    assert calls[0].outcome_text == "Respondida" and calls[0].cstat in ("137", "138")
    assert desk.dashboard.calls(failures_only=True) == []
    assert desk.dashboard.calls(product=Product.CTE) == []


def test_gap_ledger_counts_found_recovered_and_pending(office: Office, desk: Desk) -> None:
    company_id = office.harness.company.id
    assert desk.dashboard.gap_ledger() == []
    now = desk.now()
    recoveries = office.harness.ctx.recoveries
    recoveries.add(company_id, Product.NFE, next_attempt_at=now, nsus=(900, 901, 902))
    [first, *_rest] = recoveries.pending(company_id, Product.NFE)
    recoveries.update(first.id, status=GapStatus.RECOVERED)
    [line] = desk.dashboard.gap_ledger(company_id)
    assert (line.found, line.recovered, line.pending, line.abandoned) == (3, 1, 2, 0)


def test_documents_per_month_counts_this_month(office: Office, desk: Desk) -> None:
    months = desk.dashboard.documents_per_month()
    assert len(months) == dashboard.MONTHS_SHOWN
    assert months[-1].label == "nov/26"  # the harness's clock: November 2026
    assert months[-1].counts[Product.NFE] == 3  # three NF-e issued to the company (one cancelled since)
    assert sum(m.counts[Product.NFE] for m in months[:-1]) == 0
    assert dashboard.month_starts(date(2026, 1, 15), 3)[0].month == 11


def test_query_now_refuses_during_a_wait_and_says_when(office: Office, capturing: Desk) -> None:
    company_id = office.harness.company.id
    outcome = capturing.dashboard.query_now(company_id, Product.NFE)
    assert not outcome.ran and outcome.allowed_at is not None and outcome.allowed_at > capturing.now()
    assert "Próxima consulta permitida às" in outcome.message
    office.harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    office.harness.clock.set(outcome.allowed_at + timedelta(seconds=1))
    ran = capturing.dashboard.query_now(company_id, Product.NFE)
    assert ran.ran and "1 documento(s) recebido(s)" in ran.message, ran.message
