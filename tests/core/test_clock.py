"""ScaledClock: a sped-up clock whose mapping two processes can share (the crash test's parent and child)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.clock import BRASILIA, ScaledClock

VIRTUAL = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def test_two_clocks_with_the_same_mapping_read_the_same_time() -> None:
    real_origin = datetime.now(UTC) - timedelta(seconds=10)  # a clock made 10 real seconds ago
    first = ScaledClock(600, VIRTUAL, real_origin=real_origin)
    second = ScaledClock(600, VIRTUAL, real_origin=real_origin)
    a, b, c = first.now(), second.now(), first.now()
    assert a <= b <= c
    assert c - a < timedelta(seconds=600)  # both read within a real second of each other
    # Ten real seconds at 600x: 100 virtual minutes (plus whatever this test took).
    assert VIRTUAL + timedelta(minutes=100) <= a < VIRTUAL + timedelta(minutes=110)
    assert (first.origin, first.real_origin, first.factor) == (VIRTUAL, real_origin, 600)


def test_real_origin_defaults_to_construction_and_origin_to_real_time() -> None:
    before = datetime.now(UTC)
    clock = ScaledClock(3600)
    after = datetime.now(UTC)
    assert before <= clock.real_origin <= after
    assert clock.origin == clock.real_origin
    assert clock.now() >= clock.origin


def test_origins_in_other_offsets_are_the_same_instants() -> None:
    real_origin = datetime.now(UTC)
    clock = ScaledClock(60, VIRTUAL.astimezone(BRASILIA), real_origin=real_origin.astimezone(BRASILIA))
    assert clock.origin == VIRTUAL and clock.origin.tzinfo is UTC
    assert clock.real_origin == real_origin


@pytest.mark.parametrize(
    ("origin", "real_origin"),
    [(datetime(2026, 11, 2, 12, 0), None), (VIRTUAL, datetime(2026, 11, 2, 12, 0))],
)
def test_naive_origins_are_refused(origin: datetime, real_origin: datetime | None) -> None:
    with pytest.raises(ValueError, match="aware"):
        ScaledClock(60, origin, real_origin=real_origin)


def test_factor_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        ScaledClock(0)
