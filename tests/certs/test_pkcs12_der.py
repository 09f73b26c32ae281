from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12

from app.certs import pkcs12_der
from app.sandbox.pki import IssuedCert
from tests.support.legacy_pfx import PASSWORD, legacy_pfx


def test_kdf_matches_the_published_vector() -> None:
    # PKCS#12 KDF test vector used by OpenSSL and Bouncy Castle: password "smeg", ID 1, 1 iteration
    key = pkcs12_der.pkcs12_kdf("sha1", "smeg\x00".encode("utf-16-be"), bytes.fromhex("0A58CF64530D823F"), 1, 1, 24)
    assert key.hex().upper() == "8AAAE6297B6CB04642AB5B077851284EB7128F1A2A7FBCA3"


def test_mac_check_on_a_modern_file(company: IssuedCert) -> None:
    outline = pkcs12_der.outline(company.pfx)
    assert outline.mac_digest == "sha256"
    assert outline.legacy_algorithms == ()
    assert pkcs12_der.mac_matches(outline, company.password) is True
    assert pkcs12_der.mac_matches(outline, company.password + "x") is False


def test_mac_check_and_rc2_detection_on_a_legacy_file() -> None:
    assert PASSWORD == "ção"
    outline = pkcs12_der.outline(legacy_pfx())
    assert outline.mac_digest == "sha1"
    assert outline.legacy_algorithms == ("pbeWithSHAAnd40BitRC2-CBC",)
    assert pkcs12_der.mac_matches(outline, "ção") is True  # UTF-8 password, as OpenSSL reads it
    assert pkcs12_der.mac_matches(outline, "cao") is False


def test_file_without_password_still_has_a_mac_for_the_empty_password(company: IssuedCert) -> None:
    key = serialization.load_pem_private_key(company.key_pem, password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    plain = pkcs12.serialize_key_and_certificates(b"x", key, None, None, serialization.NoEncryption())
    outline = pkcs12_der.outline(plain)
    assert pkcs12_der.mac_matches(outline, "") is True
    assert pkcs12_der.mac_matches(outline, "1234") is False


@pytest.mark.parametrize(
    "data",
    [b"", b"\x30\x03\x02\x01\x02", b"\x04\x02ab", b"\x30\x80\x02\x01\x03", b"-----BEGIN CERTIFICATE-----"],
)
def test_outline_refuses_what_is_not_a_pfx(data: bytes) -> None:
    with pytest.raises((pkcs12_der.DerError, IndexError)):
        pkcs12_der.outline(data)


def test_decode_oid() -> None:
    assert pkcs12_der.decode_oid(bytes.fromhex("2A864886F70D010C0106")) == "1.2.840.113549.1.12.1.6"
    assert pkcs12_der.decode_oid(bytes.fromhex("604C0103")) == "2.16.76.1.3"
