"""``PointQueries``: gap recovery by consNSU and the daily check, as CT-e uses the engine's class
as it is, against the sandbox over mutual TLS."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from app.capture.cte.adapter import CteAdapter
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.points import PointQueries
from app.capture.nfe.recovery import NfePointQueries
from app.core.errors import CapturaError
from app.core.products import Product
from app.store.records import GapStatus
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, cte_harness

PRODUCT = Product.CTE


@pytest.fixture
def cte(tmp_path: Path, office_database: str | None) -> Iterator[Harness]:
    with cte_harness(tmp_path, database=office_database) as h:
        h.sandbox.party(CARRIER)
        yield h
        assert h.sandbox.referee.violations() == []


def _points(h: Harness, locks: CompanyLocks | None = None) -> PointQueries:
    return PointQueries(h.ctx, CteAdapter(h.ctx), locks or CompanyLocks())


def _captured(h: Harness, count: int) -> None:
    for i in range(count):
        h.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT, at=h.clock.now() - timedelta(hours=2, minutes=i))
    h.capture.distribution.run_company(h.company.id)
    assert h.stored_nsus() == list(range(1, count + 1))


def _lose(h: Harness, *nsus: int) -> None:
    """As if those NSUs had failed to persist."""
    with h.ctx.db.write_connection() as connection:
        for nsu in nsus:
            connection.execute(
                text("DELETE FROM distribution_items WHERE product = 'cte' AND nsu = :nsu"), {"nsu": nsu}
            )


def _point_calls(h: Harness) -> list[str]:
    return [c.operation or "" for c in h.ctx.audit.recent_calls(200) if (c.operation or "").startswith("consNSU")]


def test_the_daily_check_queues_the_holes_and_the_dispatch_fills_them(cte: Harness) -> None:
    _captured(cte, 5)
    _lose(cte, 2, 4)
    points = _points(cte)
    assert points.daily_gap_check() == 2
    assert sorted(g.nsu or 0 for g in cte.ctx.recoveries.pending(cte.company.id, PRODUCT)) == [2, 4]
    assert points.next_due_at() == cte.clock.now()
    assert points.dispatch() == 2
    assert cte.stored_nsus() == [1, 2, 3, 4, 5]
    assert sorted(_point_calls(cte)) == ["consNSU:000000000000002", "consNSU:000000000000004"]
    assert cte.ctx.recoveries.pending(cte.company.id, PRODUCT) == [] and points.next_due_at() is None
    assert points.daily_gap_check() == 0  # nothing missing any more


def test_a_stored_nsu_is_closed_without_a_query(cte: Harness) -> None:
    _captured(cte, 2)
    with cte.ctx.unit() as unit:
        unit.add_recoveries(cte.company.id, PRODUCT, next_attempt_at=cte.clock.now(), nsus=(2,))
    assert _points(cte).dispatch() == 0
    assert _point_calls(cte) == []
    assert cte.ctx.recoveries.pending(cte.company.id, PRODUCT) == []


def test_a_recovery_waits_while_its_companys_distribution_holds_the_cnpj(cte: Harness) -> None:
    _captured(cte, 3)
    _lose(cte, 2)
    locks = CompanyLocks()
    points = _points(cte, locks)
    points.daily_gap_check()
    held = locks.for_cnpj(cte.company.cnpj.value)
    assert held.acquire(blocking=False)
    try:
        assert points.dispatch() == 0  # never two queries of one CNPJ at once
    finally:
        held.release()
    [gap] = cte.ctx.recoveries.pending(cte.company.id, PRODUCT)
    assert (gap.nsu, gap.attempts, gap.status) == (2, 0, GapStatus.PENDING)
    assert points.dispatch() == 1 and cte.stored_nsus() == [1, 2, 3]


def test_beyond_twenty_documents_an_hour_the_rest_is_deferred_not_attempted(cte: Harness) -> None:
    _captured(cte, 23)
    _lose(cte, *range(2, 23))  # the check looks after the first NSU it still has
    points = _points(cte)
    assert points.daily_gap_check() == 21
    assert points.dispatch() == 20  # the 21st finds no slot: no call, no attempt counted
    [left] = cte.ctx.recoveries.pending(cte.company.id, PRODUCT)
    assert left.attempts == 0 and left.next_attempt_at > cte.clock.now() + timedelta(minutes=50)
    assert len(_point_calls(cte)) == 20


def test_an_nsu_asked_again_is_local_when_readable_and_queued_otherwise(cte: Harness) -> None:
    _captured(cte, 2)
    points = _points(cte)
    assert points.reprocess_nsu(cte.company.id, 1) == "local"
    _lose(cte, 2)
    assert points.reprocess_nsu(cte.company.id, 2) == "queued"
    assert [g.nsu for g in cte.ctx.recoveries.pending(cte.company.id, PRODUCT)] == [2]
    assert _point_calls(cte) == []  # queued for the dispatch, not asked here


def test_an_archived_lot_is_read_again_without_a_query_and_only_its_own(cte: Harness) -> None:
    _captured(cte, 3)
    [(archive_id, _at)] = cte.ctx.audit.archives_of(cte.company.id, "cte_distribuicao")
    asked = len(cte.sandbox.referee.requests)
    _lose(cte, 3)
    assert _points(cte).reprocess_archived(cte.company.id, archive_id) == 3
    assert cte.stored_nsus() == [1, 2, 3] and len(cte.sandbox.referee.requests) == asked
    with pytest.raises(CapturaError, match="não é de NF-e desta empresa"):
        # NF-e's point queries refuse a CT-e answer: each product reads only its own archive.
        NfePointQueries(cte.ctx, CompanyLocks()).reprocess_archived(cte.company.id, archive_id)
