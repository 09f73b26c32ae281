"""The ICP-Brasil chain as the ITI publishes it (a .p7b, a zip of .crt files), read without
openssl, and the Windows certificate store when no file is configured."""

from __future__ import annotations

import io
import ssl
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import truststore
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from app.certs.a1 import A1Certificate, load_a1
from app.certs.bundle import TrustBundleError, certificates_in, pem_bundle, read_bundle
from app.certs.tls import Trust, client_ssl_context, trust_from_settings
from app.sandbox.pki import IssuedCert, TestPki
from tests.certs.test_tls import get_cn, mtls_server


@pytest.fixture
def a1(company: IssuedCert) -> A1Certificate:
    return load_a1(company.pfx, company.password, now=datetime.now(UTC))


def _certs(pki: TestPki, other: TestPki) -> list[x509.Certificate]:
    return [x509.load_pem_x509_certificate(p.ca_cert_pem) for p in (pki, other)]


def _der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_every_form_the_iti_publishes_gives_the_same_pem_bundle(pki: TestPki) -> None:
    other = TestPki.create()
    certs = _certs(pki, other)
    expected = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)
    der = [c.public_bytes(serialization.Encoding.DER) for c in certs]
    forms = {
        "p7b DER": pkcs7.serialize_certificates(certs, serialization.Encoding.DER),
        "p7b PEM": pkcs7.serialize_certificates(certs, serialization.Encoding.PEM),
        "zip of DER .crt": _zip({"ACcompactado/ac-raiz.crt": der[0], "ACcompactado/ac-sub.crt": der[1]}),
        "zip of PEM .crt, a readme and a folder": _zip(
            {
                "leia-me.txt": b"Cadeia ICP-Brasil",
                "v10/": b"",
                "v10/a.crt": certs[0].public_bytes(serialization.Encoding.PEM),
                "v10/b.cer": certs[1].public_bytes(serialization.Encoding.PEM),
            }
        ),
        "PEM bundle": expected,
        "PEM bundle twice (duplicates dropped)": expected + expected,
    }
    for form, raw in forms.items():
        bundle = pem_bundle(raw, form)
        # a PKCS#7 keeps its certificates in a DER SET, sorted by their bytes: compare as sets
        assert sorted(x509.load_pem_x509_certificates(bundle), key=_der) == sorted(certs, key=_der), form
        assert len(bundle) == len(expected), form
    assert certificates_in(der[0]) == certs[:1]  # a single DER .crt


def test_a_file_without_certificates_is_refused_naming_the_forms(tmp_path: Path) -> None:
    for raw in (b"nada aqui", _zip({"leia-me.txt": b"sem certificados"}), b"PK\x03\x04quebrado", b"\x30\x82\x01"):
        with pytest.raises(TrustBundleError, match=r"não contém certificados reconhecíveis.*\.p7b, um \.zip"):
            pem_bundle(raw, "cadeia")
    with pytest.raises(TrustBundleError, match="Não foi possível ler o arquivo da cadeia"):
        read_bundle(tmp_path / "faltando.p7b")


def test_mutual_tls_trusts_a_p7b_and_a_zip_of_crt(a1: A1Certificate, pki: TestPki, tmp_path: Path) -> None:
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    p7b = tmp_path / "cadeia-icp-brasil.p7b"
    p7b.write_bytes(pkcs7.serialize_certificates([ca], serialization.Encoding.DER))
    archive = tmp_path / "ACcompactado.zip"
    archive.write_bytes(_zip({"AC Raiz.crt": ca.public_bytes(serialization.Encoding.DER)}))
    with mtls_server(pki, tmp_path) as url:
        for chain in (p7b, archive):
            trust = trust_from_settings(icp_brasil_bundle=chain)
            assert trust == Trust(cafile=chain)
            assert get_cn(url, trust.client_context(a1)).endswith(":12345678000195")


def test_without_a_file_windows_asks_its_own_certificate_store(a1: A1Certificate, pki: TestPki, tmp_path: Path) -> None:
    # truststore hands the verification to the OS: on Windows, the Windows store (its ICP-Brasil
    # roots, fetched on demand). Here it is this machine's store, which lacks the test CA.
    ctx = client_ssl_context(a1, platform="win32")
    assert isinstance(ctx, truststore.SSLContext)
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2 and ctx.verify_mode == ssl.CERT_REQUIRED
    with mtls_server(pki, tmp_path) as url:
        # OpenSSL says CERTIFICATE_VERIFY_FAILED; Windows "Certificate chain policy error 0x800b0109"
        # (CERT_E_UNTRUSTEDROOT): its own chain engine was asked
        with pytest.raises(httpx.ConnectError, match=r"(?i)certificate"):
            get_cn(url, ctx)
    assert not isinstance(client_ssl_context(a1, platform="linux"), truststore.SSLContext)


def _under_wine() -> bool:
    import ctypes

    return sys.platform == "win32" and hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


# Wine 8's chain engine trusts only the host's CA files (its Root store is built from them, and a
# root added to the user's store is not consulted) and rejects the exclusive root truststore hands
# it (E_INVALIDARG): no way to make it trust a test root. Real Windows and Linux run this.
@pytest.mark.skipif(_under_wine(), reason="Wine's chain engine cannot be made to trust a test root")
def test_once_the_store_trusts_the_root_the_a1_is_presented(
    a1: A1Certificate, pki: TestPki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sys.platform == "win32":
        # Windows asks the person in a dialog before adding a root to the user's store; its chain
        # engine is handed the root instead (truststore: CertGetCertificateChain with it as the
        # exclusive root), so Windows still builds and verifies the chain.
        trusted = client_ssl_context(a1, platform="win32")
        trusted.load_verify_locations(cadata=pki.ca_cert_pem.decode("ascii"))
    else:
        store = tmp_path / "loja-do-sistema.pem"  # on Linux truststore reads SSL_CERT_FILE
        store.write_bytes(pki.ca_cert_pem)
        monkeypatch.setenv("SSL_CERT_FILE", str(store))
        trusted = client_ssl_context(a1, platform="win32")
    assert isinstance(trusted, truststore.SSLContext)
    with mtls_server(pki, tmp_path) as url:
        assert get_cn(url, trusted).endswith(":12345678000195")
