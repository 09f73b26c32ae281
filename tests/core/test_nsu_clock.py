from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.clock import BRASILIA, FakeClock, brasilia_iso
from app.core.errors import InvalidIdentifier
from app.core.nsu import Nsu, missing_nsus


def test_nsu_is_zero_padded_to_15_digits() -> None:
    assert str(Nsu(6811)) == "000000000006811"
    assert Nsu.parse("000000000006811") == Nsu(6811)
    assert Nsu(1).next() == Nsu(2)


@pytest.mark.parametrize("bad", ["", "-1", "1234567890123456", "12a"])
def test_invalid_nsu(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        Nsu.parse(bad)


def test_missing_nsus() -> None:
    assert list(missing_nsus([1, 2, 5, 9, 12], 1, 10)) == [3, 4, 6, 7, 8, 10]


def test_fake_clock_an_hour_costs_nothing() -> None:
    clock = FakeClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    clock.sleep(3600)
    assert clock.now() == datetime(2026, 11, 30, 13, 0, tzinfo=UTC)
    clock.advance(timedelta(minutes=1))
    assert clock.now().minute == 1
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_brasilia_time_format() -> None:
    instant = datetime(2026, 11, 30, 15, 4, 5, 123, tzinfo=UTC)
    assert brasilia_iso(instant) == "2026-11-30T12:04:05-03:00"
    assert instant.astimezone(BRASILIA).utcoffset() == timedelta(hours=-3)
