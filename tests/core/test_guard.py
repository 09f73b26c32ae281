from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.guard import (
    CONSERVATIVE_EVENT_LIMIT,
    DEFAULT_EVENT_LIMIT,
    EventAttempt,
    attempt_status,
    logged_attempt,
    resend_status,
)

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília


def _at(minutes: int, cstat: int | None) -> EventAttempt:
    return EventAttempt(T0 + timedelta(minutes=minutes), cstat)


def test_two_of_three_attempts() -> None:
    status = attempt_status([_at(0, 577), _at(5, 577)], T0 + timedelta(minutes=10), limit=3)
    assert status.allowed and status.used == 2 and status.retry_at is None
    assert status.text == "2 de 3 tentativas"


def test_limit_reached_waits_an_hour_from_the_first_rejection() -> None:
    history = [_at(0, 577), _at(5, 577), _at(9, 577)]
    status = attempt_status(history, T0 + timedelta(minutes=10), limit=3)
    assert not status.allowed and status.retry_at == T0 + timedelta(hours=1)
    assert status.text == "3 de 3 tentativas; nova tentativa a partir de 11:00"
    reset = attempt_status(history, T0 + timedelta(hours=1), limit=3)
    assert reset.allowed and reset.used == 0 and reset.text == "0 de 3 tentativas"


def test_only_identical_rejections_count_by_default() -> None:
    history = [_at(0, 577), _at(1, 578), _at(2, 577), _at(3, None), _at(4, 135)]
    status = attempt_status(history, T0 + timedelta(minutes=5), limit=3)
    assert status.allowed and status.used == 2  # two 577; the 578, the failure and the success do not add
    strict = attempt_status(history, T0 + timedelta(minutes=5), limit=3, identical_only=False)
    assert not strict.allowed and strict.used == 3


def test_conservative_limit_never_resends_a_rejected_event_within_the_hour() -> None:
    status = attempt_status([_at(0, 594)], T0 + timedelta(minutes=59), limit=CONSERVATIVE_EVENT_LIMIT)
    assert not status.allowed and status.text.startswith("1 de 1 tentativas")
    assert attempt_status([_at(0, 594)], T0 + timedelta(minutes=60), limit=CONSERVATIVE_EVENT_LIMIT).allowed


def test_the_seed_window_restarts_at_the_first_rejection_after_it_expires() -> None:
    # 19 rejections at 10:00..10:18, one at 11:10: the 11:10 opens a new window of its own
    history = [_at(m, 999) for m in range(19)] + [_at(70, 999)]
    status = attempt_status(history, T0 + timedelta(minutes=71))
    assert status.used == 1 and status.limit == DEFAULT_EVENT_LIMIT and status.allowed


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        attempt_status([], T0, limit=0)


def test_an_alphanumeric_rejection_code_counts_like_a_cstat() -> None:
    start = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
    assert logged_attempt(start, "135").cstat == 135 and logged_attempt(start, None).cstat is None
    rejected = [logged_attempt(start, "E1833")]
    status = resend_status(rejected, start + timedelta(minutes=59))
    assert not status.allowed and status.retry_at == start + timedelta(hours=1) and status.text.startswith("1 de 1")
    assert resend_status(rejected, start + timedelta(hours=1)).allowed
    assert resend_status([logged_attempt(start, "135"), logged_attempt(start, "")], start).allowed
