"""CT-e distribution against the sandbox: real mutual TLS, virtual clock, the referee as judge.

Each rule of seed 000 §5.2-5.5 for CT-e on the shared engine: chaining from NSU 0, the hour after
an empty queue, 108/109 pauses, a 656 as a plain one-hour block, 589 as an alert the user sees,
every exchange archived, the carried NF-e keys linked, the company's filters, recovery by NSU and
a crash between half a lot and the cursor.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from app.capture.context import CaptureNotice
from app.capture.cte import CteCapture
from app.capture.nfe import NfeCapture
from app.capture.service import CaptureService
from app.core.cadence import Action
from app.core.documents import PartyRole
from app.core.errors import CapturaError
from app.core.products import Product
from app.store.carried import CarriedNfeRepository
from app.store.records import DocumentKind, DocumentQuery
from app.store.unit import Unit
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, cte_harness

NFE_KEY = "35261199888777000100550010000000011000000010"


@pytest.fixture
def cte(tmp_path: Path, office_database: str | None) -> Iterator[Harness]:
    with cte_harness(tmp_path, database=office_database) as h:  # on both engines
        h.sandbox.party(CARRIER)
        yield h


def _publish(h: Harness, count: int = 1, *, days_ago: float = 0, **options: object) -> list[object]:
    at = h.clock.now() - timedelta(days=days_ago)
    return [
        h.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT, at=at - timedelta(minutes=i), **options)
        for i in range(count)
    ]


def _calls(h: Harness) -> list[tuple[str, str | None]]:
    return [(c.operation or "", c.cstat) for c in reversed(h.ctx.audit.recent_calls(200))]


def _archived(h: Harness) -> int:
    with h.ctx.db.read_connection() as connection:
        return int(connection.execute(text("SELECT count(*) FROM archived_exchanges")).scalar_one())


def _cte_requests(h: Harness) -> list[object]:
    return [r for r in h.sandbox.referee.requests if r.service == "cte_dist" and not r.competitor]


def test_a_new_company_chains_from_nsu_zero_and_stores_parties_and_carried_keys(cte: Harness) -> None:
    _publish(cte, 119, days_ago=10)
    [with_nfe] = _publish(cte, 1, days_ago=9, nfe_keys=(NFE_KEY,), taker_role=3)
    result = cte.capture.distribution.run_company(cte.company.id)
    assert (result.queries, result.documents) == (3, 120)  # 50 + 50 + 20, chained at once
    state = cte.ctx.cursors.get(cte.company.id, Product.CTE)
    assert state.ult_nsu == state.max_nsu == cte.sandbox.max_nsu("cte", RECIPIENT)
    assert result.decision.action is Action.WAIT  # caught up: the hour starts
    assert cte.stored_nsus() == list(range(1, 121))
    found = cte.ctx.documents.find(cte.company.id, Product.CTE, with_nfe.key)  # type: ignore[attr-defined]
    assert found is not None and found.kind is DocumentKind.CTE_PROC
    assert found.emitter_id == CARRIER and found.direction.value == "received"
    roles = {p.role: p.tax_id for p in cte.ctx.documents.parties(found.id)}
    assert roles[PartyRole.SENDER] == SUPPLIER and roles[PartyRole.RECIPIENT] == RECIPIENT
    assert roles[PartyRole.TAKER] == RECIPIENT  # toma3 = 3: the recipient pays
    links = CarriedNfeRepository(cte.ctx.db)
    assert links.nfe_keys_of(cte.company.id, with_nfe.key) == [NFE_KEY]  # type: ignore[attr-defined]
    assert links.cte_keys_of(cte.company.id, NFE_KEY) == [with_nfe.key]  # type: ignore[attr-defined]
    assert _archived(cte) == 3  # CT-e: every request and response is archived (§5.3 item 3)
    assert cte.sandbox.referee.report()["violations"] == []


def test_an_empty_answer_is_archived_and_the_hour_waited_then_a_new_cte_comes_within_61_minutes(
    cte: Harness,
) -> None:
    cte.run_pending()  # 137: nothing yet; the hour starts
    first_answer = cte.clock.now()
    assert _calls(cte) == [("distNSU", "137")] and _archived(cte) == 1
    cte.at(first_answer + timedelta(seconds=5), lambda: _publish(cte))
    cte.run_until(first_answer + timedelta(hours=3))
    report = cte.sandbox.referee.report()
    assert report["violations"] == []
    latency = report["companies"][RECIPIENT]["cte"]["latency_seconds"]
    assert list(latency) == ["1"] and 59 * 60 <= latency["1"] <= 61 * 60
    times = [r.at for r in _cte_requests(cte)]  # type: ignore[attr-defined]
    assert all(b - a >= timedelta(hours=1) for a, b in itertools.pairwise(times))


@pytest.mark.parametrize(("cstat", "minutes"), [(108, 5), (109, 20)])
def test_an_outage_pauses_every_company(cte: Harness, cstat: int, minutes: int) -> None:
    cte.sandbox.outage("cte_dist", cstat, cte.clock.now() + timedelta(minutes=2))
    cte.run_pending()
    settings = cte.office.companies.get_settings(cte.company.id, Product.CTE)
    assert settings is not None
    pause = cte.ctx.cursors.get_pause(Product.CTE, settings.environment)
    assert pause is not None and pause.cstat == str(cstat)
    assert pause.paused_until >= cte.clock.now() + timedelta(minutes=minutes)
    _publish(cte)
    cte.run_until(cte.clock.now() + timedelta(minutes=minutes + 10))
    report = cte.sandbox.referee.report()
    assert report["violations"] == [] and report["companies"][RECIPIENT]["cte"]["undelivered"] == []
    times = [r.at for r in _cte_requests(cte)]  # type: ignore[attr-defined]
    assert times[1] - times[0] >= timedelta(minutes=minutes)


def test_a_656_is_a_plain_one_hour_block_without_a_cursor_jump(cte: Harness) -> None:
    _publish(cte, 3)
    cte.run_pending()  # NSU 1..3, caught up: our hour starts
    ours = cte.clock.now()
    # Another system with the same certificate asks 10 s after the hour and ends the queue again;
    # our query right after it is premature for the AN: a 656 (the competitor's doing).
    cte.at(ours + timedelta(hours=1, seconds=10), lambda: cte.sandbox.competitor_query(RECIPIENT, "cte", ult_nsu=3))
    cte.run_until(ours + timedelta(hours=1, minutes=2))
    assert ("distNSU", "656") in _calls(cte)
    state = cte.ctx.cursors.get(cte.company.id, Product.CTE)
    assert state.ult_nsu == 3 and state.blocked_until is not None
    assert state.blocked_until >= cte.clock.now() + timedelta(minutes=58)
    assert cte.ctx.recoveries.due(cte.clock.now() + timedelta(days=1), product=Product.CTE) == []  # no gap jump
    blocked_at = len(_cte_requests(cte))
    cte.run_until(state.blocked_until - timedelta(seconds=1))
    assert len(_cte_requests(cte)) == blocked_at  # nothing asked during the block
    _publish(cte)
    cte.run_until(state.blocked_until + timedelta(hours=2))
    assert cte.stored_nsus() == [1, 2, 3, 4]
    report = cte.sandbox.referee.report()
    assert report["violations"] == [] and report["companies"][RECIPIENT]["cte"]["undelivered"] == []


def test_589_blocks_and_raises_an_alert_the_user_sees(cte: Harness) -> None:
    notices: list[CaptureNotice] = []
    cte.ctx.listeners.append(notices.append)
    _publish(cte, 2)
    state = cte.ctx.cursors.get(cte.company.id, Product.CTE)
    cte.ctx.cursors.save(replace(state, ult_nsu=500, max_nsu=500))  # a cursor ahead of the service
    cte.capture.distribution.replan()
    result = cte.capture.distribution.run_company(cte.company.id)
    assert result.queries == 1 and result.decision.action is Action.BLOCKED
    assert ("distNSU", "589") in _calls(cte)
    [alert] = [n for n in notices if n.kind == "alert"]
    assert alert.product is Product.CTE and "589" in alert.message and "além do maior NSU" in alert.message
    assert cte.sandbox.referee.report()["violations"] == []


def test_filters_silence_notices_but_every_item_is_stored(cte: Harness) -> None:
    notices: list[CaptureNotice] = []
    cte.ctx.listeners.append(notices.append)
    cte.settings(cte_event_types=("610110",), cte_party_roles=(PartyRole.TAKER,))
    payer = _publish(cte, 1, days_ago=2, taker_role=3)[0]  # we pay: notifies
    _publish(cte, 2, days_ago=1, taker_role=0)  # the supplier pays: silent, still stored
    cte.sandbox.publish_cte_event(payer, "110111")  # a cancellation: not in the list, silent
    result = cte.capture.distribution.run_company(cte.company.id)
    assert result.documents == 4 and cte.stored_nsus() == [1, 2, 3, 4]
    [documents] = [n for n in notices if n.kind == "documents"]
    assert documents.count == 1
    events = cte.ctx.events.for_key(cte.company.id, Product.CTE, payer.key)  # type: ignore[attr-defined]
    assert [e.tp_evento for e in events] == ["110111"]
    query = DocumentQuery(company_id=cte.company.id, product=Product.CTE)
    assert cte.ctx.documents.count(query) == 3  # listed whatever the filters


def test_a_corrupt_doczip_is_quarantined_then_recovered_by_consnsu_within_the_quota(cte: Harness) -> None:
    _publish(cte, 5)
    cte.sandbox.inject_fault("cte_dist", "corrupt_gzip")
    result = cte.capture.distribution.run_company(cte.company.id)
    assert (result.documents, result.quarantined) == (4, 1)
    cte.run_until(cte.clock.now() + timedelta(minutes=30))
    query = DocumentQuery(company_id=cte.company.id, product=Product.CTE)
    summaries = cte.ctx.documents.summaries(cte.ctx.documents.page_ids(query, 0, 50))
    assert len(summaries) == 5 and not [s for s in summaries if s.quarantined]
    assert [op for op, cstat in _calls(cte) if op.startswith("consNSU")] and ("distNSU", "138") in _calls(cte)
    delivered = cte.sandbox.referee.report()["companies"][RECIPIENT]["cte"]["delivered"]
    assert any("consNSU" in d["via"] for d in delivered.values())
    assert cte.sandbox.referee.report()["violations"] == []


def test_a_137_for_one_nsu_closes_its_recovery_and_a_stored_nsu_is_never_asked(cte: Harness) -> None:
    _publish(cte, 1, days_ago=100)  # NSU 1: out of the service's 3-month window
    _publish(cte, 2)  # NSU 2, 3
    cte.run_pending()  # from NSU 0 the window starts at 2: no gap is assumed before it
    assert cte.stored_nsus() == [2, 3] and cte.ctx.recoveries.pending(cte.company.id, Product.CTE) == []
    with cte.ctx.unit() as unit:  # as if NSU 1 and 3 had failed to persist
        unit.add_recoveries(cte.company.id, Product.CTE, next_attempt_at=cte.clock.now(), nsus=(1, 3))
    assert cte.capture.points.dispatch() == 1  # NSU 3 is stored already: closed without a query
    assert cte.ctx.recoveries.pending(cte.company.id, Product.CTE) == []
    point = [(op, cstat) for op, cstat in _calls(cte) if op.startswith("consNSU")]
    assert point == [("consNSU:000000000000001", "137")]  # the NSU does not exist there: closed
    assert cte.sandbox.referee.report()["violations"] == []


class Killed(BaseException):
    """The process dying: nothing in the engine may catch it."""


def test_a_crash_between_half_a_lot_and_the_cursor_loses_and_duplicates_nothing(
    cte: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(cte, 120, days_ago=5)
    saves = {"n": 0}
    real_save = Unit.save_state

    def dies_on_the_second_lot(self: Unit, state: object) -> None:
        saves["n"] += 1
        if saves["n"] == 2:
            raise Killed  # the lot's documents are written in this transaction, the cursor not yet
        real_save(self, state)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(Unit, "save_state", dies_on_the_second_lot)
        with pytest.raises(Killed):
            cte.capture.distribution.run_company(cte.company.id)
    assert cte.stored_nsus() == list(range(1, 51))  # the half-written lot rolled back with its cursor
    assert cte.ctx.cursors.get(cte.company.id, Product.CTE).ult_nsu == 50

    cte.capture = CteCapture(cte.ctx)  # the next process, as the service's start takes it up
    CaptureService(cte.ctx, captures={Product.CTE: cte.capture}, workers=1).recover_after_crash()
    cte.run_until(cte.clock.now() + timedelta(hours=2))
    assert cte.stored_nsus() == list(range(1, 121))
    assert cte.ctx.items.count_received_since(Product.CTE, cte.clock.now() - timedelta(days=1)) == {cte.company.id: 120}
    query = DocumentQuery(company_id=cte.company.id, product=Product.CTE)
    assert cte.ctx.documents.count(query) == 120  # each CT-e once
    report = cte.sandbox.referee.report()
    assert report["violations"] == [] and report["companies"][RECIPIENT]["cte"]["undelivered"] == []


def test_the_service_captures_nfe_and_cte_together(cte: Harness) -> None:
    from app.core.products import Environment
    from app.store.records import CaptureSettings

    cte.office.companies.save_settings(
        CaptureSettings(cte.company.id, Product.NFE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    cte.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    _publish(cte, 2)
    service = CaptureService(cte.ctx, products=(Product.NFE, Product.CTE), workers=1)
    report = service.run_once()
    by_product = {o.product: o for o in report.outcomes}
    assert by_product[Product.NFE].documents == 1 and by_product[Product.CTE].documents == 2
    assert {s.product for s in service.status()} == {Product.NFE, Product.CTE}
    assert cte.sandbox.referee.report()["violations"] == []


def test_a_lot_is_reprocessed_from_its_archive_and_an_nsu_on_request(cte: Harness) -> None:
    _publish(cte, 3, nfe_keys=(NFE_KEY,))
    cte.run_pending()
    [(lot, _at)] = [a for a in cte.ctx.audit.archives_of(cte.company.id, "cte_distribuicao")]
    asked = len(cte.sandbox.referee.requests)
    assert cte.capture.points.reprocess_archived(cte.company.id, lot) == 3
    assert len(cte.sandbox.referee.requests) == asked  # no new query: the archived answer is enough
    assert cte.stored_nsus() == [1, 2, 3]
    assert cte.ctx.documents.count(DocumentQuery(company_id=cte.company.id, product=Product.CTE)) == 3
    assert CarriedNfeRepository(cte.ctx.db).cte_keys_of(cte.company.id, NFE_KEY)  # links kept, not doubled
    with pytest.raises(CapturaError, match="não é de NF-e desta empresa"):
        NfeCapture(cte.ctx).points.reprocess_archived(cte.company.id, lot)  # a CT-e answer is no NF-e lot

    assert cte.capture.points.reprocess_nsu(cte.company.id, 2) == "local"
    assert cte.capture.points.reprocess_nsu(cte.company.id, 4) == "queued"
    _publish(cte)  # NSU 4 now exists at the service
    cte.run_until(cte.clock.now() + timedelta(minutes=10))
    assert ("consNSU:000000000000004", "138") in _calls(cte)
    assert cte.ctx.items.received(cte.company.id, Product.CTE, 1, 4) == [1, 2, 3, 4]
    assert cte.sandbox.referee.report()["violations"] == []


def test_the_daily_check_alerts_on_a_backlog_left_many_hours(cte: Harness) -> None:
    notices: list[CaptureNotice] = []
    cte.ctx.listeners.append(notices.append)
    _publish(cte, 1)
    cte.run_pending()
    state = cte.ctx.cursors.get(cte.company.id, Product.CTE)
    cte.ctx.cursors.save(replace(state, max_nsu=state.ult_nsu + 30, paused=False))  # the service has more
    cte.clock.set(cte.clock.now() + timedelta(hours=8))
    cte.capture.points.daily_gap_check()
    [alert] = [n for n in notices if n.kind == "alert"]
    assert alert.product is Product.CTE and "30 documento(s) de CT-e pendente(s)" in alert.message
