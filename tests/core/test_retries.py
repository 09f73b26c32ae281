"""The retry series, named once in app.core.retries: each as the rule it stands for says."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.retries import ADN_CALL_RETRY_SECONDS, EVENT_SEND, EXPORT_RETRY, GAP_RECOVERY, Backoff

MINUTE = timedelta(minutes=1)


def test_event_sends_and_gap_recoveries_wait_1_min_doubling_to_30() -> None:
    for series in (EVENT_SEND, GAP_RECOVERY):
        assert [series.delay(n) for n in range(1, 9)] == [MINUTE * m for m in (1, 2, 4, 8, 16, 30, 30, 30)]


def test_exports_wait_1_min_doubling_to_an_hour_without_end() -> None:
    delays = [EXPORT_RETRY.delay(n) for n in (1, 2, 6, 7, 1000)]
    assert delays == [MINUTE, 2 * MINUTE, 32 * MINUTE, 60 * MINUTE, 60 * MINUTE]


@pytest.mark.parametrize("failures", [-3, 0, 1])
def test_a_count_below_one_waits_the_first_step(failures: int) -> None:
    assert Backoff(first=timedelta(seconds=7), cap=timedelta(hours=1)).delay(failures) == timedelta(seconds=7)


def test_the_adn_call_is_tried_four_times_within_seven_seconds() -> None:
    assert ADN_CALL_RETRY_SECONDS == (1.0, 2.0, 4.0)
