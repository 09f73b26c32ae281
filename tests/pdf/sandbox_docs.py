"""The sandbox's document generator, set up once for the DACTE and DANFSe tests."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki

FIXTURES = Path(__file__).parents[1] / "fixtures"
ISSUED_AT = datetime(2026, 11, 10, 13, 30, tzinfo=UTC)
# An alphanumeric CNPJ (NT Conjunta 2025.001): its documents' keys carry letters.
CARRIER = Party("12ABC34501DE35", "TRANSPORTADORA ALFA LTDA", "SC", "4205407", ie="254123456")
SUPPLIER = Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")
CLIENT = Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")


@cache
def factory() -> DocumentFactory:
    return DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=13)
