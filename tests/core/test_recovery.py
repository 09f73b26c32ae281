from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.cadence import CaptureState
from app.core.products import Product
from app.core.recovery import (
    DISPATCH_INTERVAL,
    MAX_ATTEMPTS,
    RecoveryStatus,
    after_attempt,
    backoff,
    gaps,
    is_stuck,
    lookback_start,
    next_daily_run,
    nfse_rewind,
)

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)


def test_next_daily_run_is_23h_brasilia_across_the_utc_date_line() -> None:
    # 10:00 in Brasília on the 2nd: tonight's 23:00 is 02:00 UTC on the 3rd
    assert next_daily_run(T0) == datetime(2026, 11, 3, 2, 0, tzinfo=UTC)
    # 01:30 UTC on the 3rd is still 22:30 of the 2nd in Brasília
    assert next_daily_run(datetime(2026, 11, 3, 1, 30, tzinfo=UTC)) == datetime(2026, 11, 3, 2, 0, tzinfo=UTC)
    # exactly at 23:00 the next run is tomorrow's
    assert next_daily_run(datetime(2026, 11, 3, 2, 0, tzinfo=UTC)) == datetime(2026, 11, 4, 2, 0, tzinfo=UTC)
    assert next_daily_run(T0).tzinfo is UTC
    # across a month and year end
    assert next_daily_run(datetime(2027, 1, 1, 2, 30, tzinfo=UTC)) == datetime(2027, 1, 2, 2, 0, tzinfo=UTC)


def test_gaps_over_the_last_three_days() -> None:
    assert lookback_start(T0) == T0 - timedelta(days=3)
    assert gaps([100, 101, 104, 106], 100, 107) == (102, 103, 105, 107)
    assert gaps([], 5, 4) == ()
    assert DISPATCH_INTERVAL == timedelta(minutes=5)


def test_backoff_doubles_to_thirty_minutes_with_jitter() -> None:
    assert [backoff(n, 0.0) for n in (1, 2, 3, 5, 6, 7)] == [timedelta(minutes=m) for m in (1, 2, 4, 16, 30, 30)]
    assert backoff(6, 0.5) == timedelta(minutes=27)  # jitter only shortens: the cap holds
    with pytest.raises(ValueError):
        backoff(0, 0.0)
    with pytest.raises(ValueError):
        backoff(1, 1.0)


def test_attempts_end_in_recovered_not_found_or_abandoned() -> None:
    found = after_attempt(0, 138, T0, 0.0)
    assert found.status is RecoveryStatus.RECOVERED and found.counts_for_quota
    missing = after_attempt(2, 137, T0, 0.0)
    assert missing.status is RecoveryStatus.NOT_FOUND and "NSU inexistente" in missing.reason
    assert not missing.counts_for_quota
    retry = after_attempt(2, None, T0, 0.0, xmotivo="tempo esgotado")
    assert (
        retry.status is RecoveryStatus.PENDING and retry.attempts == 3 and retry.retry_at == T0 + timedelta(minutes=4)
    )
    assert "Tentativa 3 de 8" in retry.reason
    last = after_attempt(MAX_ATTEMPTS - 1, 215, T0, 0.3, xmotivo="Rejeicao")
    assert last.status is RecoveryStatus.ABANDONED and last.retry_at is None and "8 tentativas" in last.reason
    blocked = after_attempt(3, 656, T0, 0.0)
    assert blocked.status is RecoveryStatus.PENDING and blocked.attempts == 3  # not counted as an attempt


def test_stuck_processing_after_two_hours() -> None:
    assert not is_stuck(T0, T0 + timedelta(hours=2))
    assert is_stuck(T0, T0 + timedelta(hours=2, seconds=1))


def test_nfse_rewinds_to_before_the_first_gap() -> None:
    state = CaptureState(1, Product.NFSE, ult_nsu=500, max_nsu=500)
    assert nfse_rewind(state, [430, 470]).ult_nsu == 429
    assert nfse_rewind(state, []) == state
    with pytest.raises(ValueError):
        nfse_rewind(CaptureState(1, Product.NFE, ult_nsu=500), [430])
