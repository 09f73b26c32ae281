"""Export tests: a data folder filled by real capture from the sandbox (HTTPS, mutual TLS, FakeClock)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.exports import ExportProfile, ExportRepository
from tests.support.nfe_harness import Harness, nfe_harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as harness:
        yield harness


def files_under(root: Path) -> list[str]:
    """Every file below ``root`` as a sorted list of '/'-separated relative paths."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def add_profile(harness: Harness, destination: Path, name: str = "arquivo", **options: object) -> ExportProfile:
    from app.export.patterns import DEFAULT_PATTERN

    profile = ExportProfile(name=name, destination=str(destination), pattern=DEFAULT_PATTERN, **options)  # type: ignore[arg-type]
    return ExportRepository(harness.office.db).add(profile)
