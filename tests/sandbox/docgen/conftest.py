"""Shared fixtures for the document generator tests: one PKI, one factory, compiled schemas."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from importlib import resources

import pytest
from lxml import etree

from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki

ISSUED_AT = datetime(2026, 11, 10, 13, 30, tzinfo=UTC)


@cache
def _schema(path: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(resources.files("nfelib").joinpath(path))))


def assert_valid(xml: bytes, path: str) -> None:
    """Validate ``xml`` against the nfelib XSD at ``path`` (e.g. "nfe/schemas/v4_0/procNFe_v4.00.xsd")."""
    schema = _schema(path)
    root = etree.fromstring(xml)
    assert schema.validate(root), f"{path}: {schema.error_log.filter_from_errors()[:3]}"


@pytest.fixture(scope="session")
def xsd() -> Callable[[bytes, str], None]:
    return assert_valid


@pytest.fixture(scope="session")
def pki() -> TestPki:
    return TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC))


@pytest.fixture(scope="session")
def factory(pki: TestPki) -> DocumentFactory:
    return DocumentFactory(pki, seed=42)


@pytest.fixture(scope="session")
def supplier() -> Party:
    return Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")


@pytest.fixture(scope="session")
def client() -> Party:
    return Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")


@pytest.fixture(scope="session")
def carrier() -> Party:
    return Party("12ABC34501DE35", "TRANSPORTADORA ALFA LTDA", "SC", "4205407", ie="254123456")


@pytest.fixture(scope="session")
def person() -> Party:
    return Party("52998224725", "FULANO DE TAL", "SP", "3509502")
