from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.records import Company, GapStatus, Product
from app.store.recoveries import GapRecoveryRepository


def test_gaps_are_queued_once_and_come_due_in_order(db: Database, company: Company, clock: FakeClock) -> None:
    gaps = GapRecoveryRepository(db)
    now = clock.now()
    assert gaps.add(company.id, Product.NFE, nsus=(3, 5, 6), next_attempt_at=now) == 3
    assert gaps.add(company.id, Product.NFE, nsus=(5, 6, 9), next_attempt_at=now + timedelta(minutes=5)) == 1
    assert gaps.add(company.id, Product.NFE, access_key="1" * 44, next_attempt_at=now) == 1
    assert [g.nsu for g in gaps.due(now)] == [3, 5, 6, None]
    assert [g.nsu for g in gaps.due(now + timedelta(minutes=5))][-1] == 9

    first = gaps.due(now)[0]
    deferred = gaps.update(
        first.id, status=GapStatus.PENDING, next_attempt_at=now + timedelta(hours=1), count_attempt=False
    )
    assert deferred.attempts == 0  # waiting for quota is not an attempt
    failed = gaps.update(
        first.id, status=GapStatus.PENDING, next_attempt_at=now + timedelta(hours=2), last_error="timeout"
    )
    assert failed.attempts == 1 and failed.last_error == "timeout"
    done = gaps.update(gaps.due(now)[0].id, status=GapStatus.RECOVERED)
    assert done.status is GapStatus.RECOVERED
    assert done.nsu == 5  # 3 was pushed to later, so 5 was the first due
    assert [g.nsu for g in gaps.pending(company.id, Product.NFE)] == [None, 3, 6, 9]  # NULL (key) first


def test_a_gap_needs_an_nsu_or_a_key(db: Database, company: Company, clock: FakeClock) -> None:
    with pytest.raises(InvalidRecord):
        GapRecoveryRepository(db).add(company.id, Product.CTE, next_attempt_at=clock.now())
