"""Fixtures for the document readers: the real fixture files and one generator (PKI + factory)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki

NFE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nfe"


@pytest.fixture(scope="session")
def nfe_fixture() -> Callable[[str], bytes]:
    """The bytes of one file in tests/fixtures/nfe."""

    def read(name: str) -> bytes:
        return (NFE_FIXTURES / name).read_bytes()

    return read


@pytest.fixture(scope="session")
def factory() -> DocumentFactory:
    return DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=11)


@pytest.fixture(scope="session")
def supplier() -> Party:
    return Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")


@pytest.fixture(scope="session")
def company() -> Party:
    """The app's client company (the recipient of most documents)."""
    return Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")


@pytest.fixture(scope="session")
def carrier() -> Party:
    return Party("12ABC34501DE35", "TRANSPORTADORA ALFA LTDA", "SC", "4205407", ie="254123456")
