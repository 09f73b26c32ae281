"""Desk and window tests: a data folder filled by real capture from the sandbox (HTTPS, FakeClock)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from app.desk import Desk
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfe_harness


@dataclass
class Office:
    """What the sandbox published and the capture stored, by role."""

    harness: Harness
    received: list[str]  # NF-e keys issued to the company
    cancelled: str  # one of them, cancelled after it was captured
    event_only: str  # an NF-e the company issued: only its customer's Ciência comes back


def fill(harness: Harness) -> Office:
    sandbox = harness.sandbox
    received = [str(sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(3)]
    issued = sandbox.publish_nfe(RECIPIENT, SUPPLIER)
    sandbox.publish_nfe_event(issued, "210210")  # the customer's Ciência reaches the emitter
    harness.run_pending()
    harness.clock.advance(timedelta(hours=1, minutes=5))
    sandbox.publish_nfe_event(received[0], "110111", justification="Cancelamento por erro de digitacao")
    harness.run_pending()
    return Office(harness, received, received[0], str(issued.key))


@pytest.fixture
def office(tmp_path: Path) -> Iterator[Office]:
    with nfe_harness(tmp_path) as harness:
        yield fill(harness)


@pytest.fixture
def desk(office: Office) -> Iterator[Desk]:
    """A desk that reads and sends, without its own capture service (the harness captures)."""
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, capture=False)
    desk.open()
    try:
        yield desk
    finally:
        desk.close()
