from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from app.core.quota import (
    MAX_DEFERRAL_SPACING,
    QUOTA_MARGIN,
    available_at,
    deferral_spacing,
    deferred_until,
    key_query_allowed,
    next_key_query_at,
    next_slot_at,
    slot_available,
    user_wait_text,
)

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília
HOUR = timedelta(hours=1)


def _every(minutes: int, count: int, start: datetime = T0) -> list[datetime]:
    return [start + timedelta(minutes=minutes * i) for i in range(count)]


def test_twenty_counted_in_the_last_hour_leave_no_slot() -> None:
    counted = _every(2, 20)  # 10:00 .. 10:38
    now = T0 + timedelta(minutes=40)
    assert not slot_available(counted, now)
    assert next_slot_at(counted, now) == T0 + HOUR + QUOTA_MARGIN  # the oldest leaves the window
    assert slot_available(counted, T0 + HOUR + QUOTA_MARGIN)
    assert slot_available(counted[:19], now) and next_slot_at(counted[:19], now) == now


def test_uncounted_queries_give_their_slot_back() -> None:
    # the caller records only the queries that returned a document: 19 hits and any number of misses
    hits = _every(1, 19)
    assert slot_available(hits, T0 + timedelta(minutes=30))


def test_more_than_twenty_in_the_window_wait_for_enough_to_leave() -> None:
    counted = _every(1, 22)  # more than the limit (e.g. recorded before a limit change)
    now = T0 + timedelta(minutes=30)
    # 3 must leave for only 19 to remain: the third oldest's exit
    assert next_slot_at(counted, now) == T0 + timedelta(minutes=2) + HOUR + QUOTA_MARGIN


def test_deferral_adds_the_callers_spacing_and_is_bounded() -> None:
    counted = _every(2, 20)
    now = T0 + timedelta(minutes=40)
    spacing = deferral_spacing(random.Random(4))
    assert timedelta(0) <= spacing <= MAX_DEFERRAL_SPACING
    assert deferred_until(counted, now, spacing) == T0 + HOUR + QUOTA_MARGIN + spacing
    block = T0 + 2 * HOUR
    assert deferred_until(counted, now, timedelta(minutes=3), blocked_until=block) == block + timedelta(minutes=3)
    with pytest.raises(ValueError):
        deferred_until(counted, now, timedelta(minutes=31))


def test_user_is_told_when_the_query_can_run() -> None:
    counted = _every(2, 20)
    now = T0 + timedelta(minutes=40)
    assert user_wait_text(counted, now) == (
        "Limite de 20 consultas com documento por hora atingido. Consulta disponível a partir de 11:01."
    )
    assert user_wait_text([], now) is None
    block = T0 + timedelta(minutes=90)
    assert available_at([], now, blocked_until=block) == block
    assert user_wait_text([], now, blocked_until=block) == (
        "Consultas pontuais suspensas por consumo indevido. Consulta disponível a partir de 11:30."
    )


def test_the_eleventh_query_of_one_key_within_an_hour_is_refused() -> None:
    ten = _every(5, 10)  # 10:00 .. 10:45, every query counts (NT 2018.002)
    now = T0 + timedelta(minutes=50)
    assert key_query_allowed(ten[:9], now)
    assert not key_query_allowed(ten, now)
    assert next_key_query_at(ten, now) == T0 + HOUR
    assert key_query_allowed(ten, T0 + HOUR)
