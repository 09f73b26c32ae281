"""The sandbox's NSU queues: what a distNSU from a given ultNSU gets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.clock import FakeClock
from app.sandbox.payload import Payload
from app.sandbox.sandbox import Sandbox
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


def test_an_nfe_issued_ahead_gets_its_nsus_when_published() -> None:
    clock = FakeClock(NOW)
    sandbox = Sandbox(clock, seed=3)
    try:
        later = NOW + timedelta(hours=5)
        issued = sandbox.publisher.issue_nfe("99888777000100", "11222333000181", transporter="44555666000181", at=later)
        assert sandbox.max_nsu("nfe", "11222333000181") == 0  # written, not yet known to anyone
        sandbox.publisher.publish_issued_nfe(issued, later)
        [summary] = sandbox.entries("nfe", "11222333000181")
        [full] = sandbox.entries("nfe", "44555666000181")
        assert (summary.kind, summary.key, summary.published_at) == ("resNFe", issued.key, later)
        assert (full.kind, full.key) == ("procNFe", issued.key)
        assert issued.issued_at < later
    finally:
        sandbox.stop()
