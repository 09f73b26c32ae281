"""Certificates shared by the certificate tests: RSA keys are slow-ish, so one PKI per session."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.sandbox.pki import IssuedCert, TestPki

# Real time: the mutual-TLS tests hand these certificates to OpenSSL, which checks validity itself.
NOW = datetime.now(UTC)
COMPANY_CNPJ = "12345678000195"
COMPANY_NAME = "EMPRESA TESTE LTDA"


@pytest.fixture(scope="session")
def pki() -> TestPki:
    return TestPki.create(now=NOW)


@pytest.fixture(scope="session")
def company(pki: TestPki) -> IssuedCert:
    return pki.company_cert(COMPANY_CNPJ, COMPANY_NAME, password="s3nh@ forte")
