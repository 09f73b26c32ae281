"""The sandbox's NSU queues: what a distNSU from a given ultNSU gets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.sandbox.payload import Payload
from app.sandbox.state import RETENTION, Ledger

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


def _ledger(published: list[datetime]) -> Ledger:
    ledger = Ledger()
    for index, at in enumerate(published):
        ledger.append(product="nfe", kind="resNFe", payload=Payload(b"<resNFe/>"), key=f"{index:044d}", published_at=at)
    return ledger


def test_after_starts_past_the_given_nsu_and_stops_at_the_limit() -> None:
    ledger = _ledger([NOW - timedelta(minutes=m) for m in range(120)])
    assert [e.nsu for e in ledger.after(0, NOW, 50)] == list(range(1, 51))
    assert [e.nsu for e in ledger.after(100, NOW, 50)] == list(range(101, 121))
    assert ledger.after(120, NOW, 50) == [] and ledger.after(500, NOW, 50) == []


def test_after_skips_what_left_the_three_month_window() -> None:
    old = NOW - RETENTION - timedelta(days=1)
    ledger = _ledger([old, old, NOW, old, NOW])
    assert [e.nsu for e in ledger.after(0, NOW, 50)] == [3, 5]
    assert [e.nsu for e in ledger.after(3, NOW, 50)] == [5]
    assert ledger.at(1, NOW) is None and ledger.at(3, NOW) is not None
