"""The ICP-Brasil chain as the ITI publishes it, read without openssl.

The ITI's repository offers the chain as a ``.p7b`` (PKCS#7, DER or PEM) and as a ``.zip`` of
``.crt`` files (DER or PEM); people also keep a ``.pem`` bundle or a single ``.crt``. Every form
is read with ``cryptography`` and becomes the PEM bundle OpenSSL's verification takes.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from app.core.errors import CapturaError

# A chain is a few dozen certificates of ~2 KB: these bound a hostile or wrong zip.
MAX_MEMBERS = 500
MAX_MEMBER_BYTES = 1 << 20
FORMATS = "um .p7b, um .zip de arquivos .crt, um .pem ou um .crt"


class TrustBundleError(CapturaError):
    """The configured CA bundle is missing or holds no certificate."""


def certificates_in(raw: bytes) -> list[x509.Certificate]:
    """Every certificate in ``raw``: PEM (certificates and PKCS#7 blocks), a DER certificate, a
    DER PKCS#7, or a zip of any of these. Empty when there is none."""
    if raw.startswith(b"PK\x03\x04"):
        return _from_zip(raw)
    found: list[x509.Certificate] = []
    if b"-----BEGIN" in raw:
        if b"-----BEGIN CERTIFICATE-----" in raw:
            found += x509.load_pem_x509_certificates(raw)
        for block in _pem_blocks(raw, b"PKCS7"):
            found += pkcs7.load_pem_pkcs7_certificates(block)
        return found
    for load in (_der_certificate, pkcs7.load_der_pkcs7_certificates):
        try:
            return load(raw)
        except ValueError:
            continue
    return []


def _der_certificate(raw: bytes) -> list[x509.Certificate]:
    return [x509.load_der_x509_certificate(raw)]


def _pem_blocks(raw: bytes, label: bytes) -> list[bytes]:
    blocks, begin, end = [], b"-----BEGIN " + label + b"-----", b"-----END " + label + b"-----"
    start = raw.find(begin)
    while start >= 0:
        stop = raw.find(end, start)
        if stop < 0:
            break
        blocks.append(raw[start : stop + len(end)] + b"\n")
        start = raw.find(begin, stop)
    return blocks


def _from_zip(raw: bytes) -> list[x509.Certificate]:
    found: list[x509.Certificate] = []
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()][:MAX_MEMBERS]
            for member in members:
                if member.file_size > MAX_MEMBER_BYTES:
                    continue
                with archive.open(member) as content:
                    data = content.read(MAX_MEMBER_BYTES + 1)
                if not data.startswith(b"PK\x03\x04"):  # no zip inside a zip
                    try:
                        found += certificates_in(data)
                    except ValueError:
                        continue  # a readme, a certificate revocation list...
    except zipfile.BadZipFile:
        return []
    return found


def pem_bundle(raw: bytes, source: str) -> bytes:
    """The certificates of ``raw`` (any form above) as one PEM bundle, each once."""
    try:
        certificates = certificates_in(raw)
    except ValueError:
        certificates = []
    if not certificates:
        raise TrustBundleError(
            f"O arquivo {source} não contém certificados reconhecíveis. Indique a cadeia ICP-Brasil como "
            f"o ITI a publica: {FORMATS}."
        )
    seen: set[bytes] = set()
    pem = b""
    for certificate in certificates:
        fingerprint = certificate.fingerprint(hashes.SHA256())
        if fingerprint not in seen:
            seen.add(fingerprint)
            pem += certificate.public_bytes(serialization.Encoding.PEM)
    return pem


def read_bundle(path: Path) -> bytes:
    """The PEM bundle of the file at ``path`` (.p7b, .zip, .pem, .crt, .cer)."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TrustBundleError(
            f"Não foi possível ler o arquivo da cadeia de certificados {path} ({error.strerror or error}). "
            f"Baixe a cadeia da ICP-Brasil em https://acraiz.icpbrasil.gov.br ({FORMATS}) e indique o "
            "arquivo nas configurações."
        ) from None
    return pem_bundle(raw, str(path))
