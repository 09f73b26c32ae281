"""The legacy A1 file old Windows exports hold (certificates under RC2-40, key under 3DES, SHA-1
MAC), committed once: cryptography cannot write RC2 and Windows has no ``openssl`` command line.
How it was made: tests/fixtures/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "certs"
PASSWORD = "ção"  # non-ASCII on purpose: OpenSSL derives the keys from its UTF-8 bytes
CNPJ = "12345678000195"


def legacy_pfx() -> bytes:
    """The .pfx (e-CNPJ of EMPRESA ANTIGA LTDA, valid until 2036-10-30, one CA in its chain)."""
    return (FOLDER / "legacy-rc2.pfx").read_bytes()


def legacy_cert_pem() -> bytes:
    """The e-CNPJ certificate inside :func:`legacy_pfx`, as PEM."""
    return (FOLDER / "legacy-rc2.crt").read_bytes()
