"""Capture tests: a data folder wired to the sandbox over real mutual TLS, on a virtual clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, nfe_harness

__all__ = ["CARRIER", "RECIPIENT", "SUPPLIER", "Harness"]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as h:
        yield h
