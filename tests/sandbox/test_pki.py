from __future__ import annotations

import ipaddress
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.sandbox.pki import CA_NAME, IssuedCert, TestPki
from tests.support.legacy_pfx import PASSWORD, legacy_cert_pem, legacy_pfx

NOV_2026 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
RC2_40_OID_DER = bytes.fromhex("060A2A864886F70D010C0106")  # pbeWithSHAAnd40BitRC2-CBC


@pytest.fixture(scope="module")
def pki() -> TestPki:
    return TestPki.create(now=NOV_2026)


@pytest.fixture(scope="module")
def company(pki: TestPki) -> IssuedCert:
    return pki.company_cert("12.345.678/0001-95", "EMPRESA TESTE LTDA", password="segredo")


def other_names(cert: x509.Certificate) -> dict[str, bytes]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {o.type_id.dotted_string: o.value for o in san.get_values_for_type(x509.OtherName)}


def issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    public = ca.public_key()
    assert isinstance(public, rsa.RSAPublicKey)
    assert cert.signature_hash_algorithm is not None
    public.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm)
    return cert.issuer == ca.subject


def test_root_ca(pki: TestPki) -> None:
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    assert ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == CA_NAME
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert ca.not_valid_before_utc <= NOV_2026
    assert ca.not_valid_after_utc - ca.not_valid_before_utc >= timedelta(days=3650)
    public = ca.public_key()
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size == 2048
    assert issued_by(ca, ca)


def test_company_certificate_looks_like_icp_brasil(pki: TestPki, company: IssuedCert) -> None:
    cert = x509.load_pem_x509_certificate(company.cert_pem)
    assert company.cnpj == "12345678000195"
    assert company.common_name == "EMPRESA TESTE LTDA:12345678000195"
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == company.common_name
    assert cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "ICP-Brasil"

    names = other_names(cert)
    assert names["2.16.76.1.3.3"] == b"\x04\x0e12345678000195"  # OCTET STRING of the CNPJ
    assert {"2.16.76.1.3.2", "2.16.76.1.3.4", "2.16.76.1.3.7"} <= set(names)
    assert len(names["2.16.76.1.3.4"]) == 2 + 51  # birth date + CPF + NIS + RG + issuer/UF

    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(eku) == {ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.EMAIL_PROTECTION}
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and usage.content_commitment and usage.key_encipherment
    assert not usage.key_cert_sign
    assert issued_by(cert, pki.ca_certificate)
    assert cert.not_valid_before_utc < NOV_2026 < cert.not_valid_after_utc


def test_pfx_holds_key_cert_and_chain_under_the_password(pki: TestPki, company: IssuedCert) -> None:
    key, cert, chain = pkcs12.load_key_and_certificates(company.pfx, b"segredo")
    assert cert is not None and key is not None
    assert cert.public_bytes(serialization.Encoding.PEM) == company.cert_pem
    assert cert.public_key() == key.public_key()
    assert [c.subject for c in chain] == [pki.ca_certificate.subject]
    with pytest.raises(ValueError):
        pkcs12.load_key_and_certificates(company.pfx, b"errada")
    assert company.key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert "segredo" not in repr(company)


def test_switches_drop_oid_and_cn_style(pki: TestPki) -> None:
    plain = pki.company_cert("12ABC34501DE35", "EMPRESA ALFA", include_cnpj_oid=False, cn_style=False)
    cert = x509.load_pem_x509_certificate(plain.cert_pem)
    assert "2.16.76.1.3.3" not in other_names(cert)
    assert plain.common_name == "EMPRESA ALFA"
    assert plain.cnpj == "12ABC34501DE35"


def test_validity_overrides(pki: TestPki) -> None:
    end = datetime(2026, 3, 12, 15, tzinfo=UTC)
    expired = x509.load_pem_x509_certificate(pki.company_cert("12345678000195", "E", not_after=end).cert_pem)
    assert expired.not_valid_after_utc == end
    assert expired.not_valid_before_utc < end
    start = datetime(2027, 1, 10, tzinfo=UTC)
    future = x509.load_pem_x509_certificate(pki.company_cert("12345678000195", "E", not_before=start).cert_pem)
    assert future.not_valid_before_utc == start
    assert future.not_valid_after_utc > start


def test_person_certificate_carries_cpf_oid(pki: TestPki) -> None:
    person = pki.person_cert("529.982.247-25", "FULANO DE TAL")
    cert = x509.load_pem_x509_certificate(person.cert_pem)
    assert person.cnpj is None
    assert person.common_name == "FULANO DE TAL:52998224725"
    value = other_names(cert)["2.16.76.1.3.1"]
    assert value[2 + 8 : 2 + 19] == b"52998224725"


def test_server_certificate(pki: TestPki) -> None:
    server = pki.server_cert()
    cert = x509.load_pem_x509_certificate(server.cert_pem)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert server.cnpj is None


def test_legacy_rc2_pfx(pki: TestPki) -> None:
    # The committed legacy file (tests/support/legacy_pfx.py) is what old Windows exports hold;
    # what this PKI issues never is.
    legacy = legacy_pfx()
    assert RC2_40_OID_DER in legacy
    key, cert, chain = pkcs12.load_key_and_certificates(legacy, PASSWORD.encode("utf-8"))
    assert cert is not None and cert.public_bytes(serialization.Encoding.PEM) == legacy_cert_pem()
    assert key is not None and len(chain) == 1
    modern = pki.company_cert("12345678000195", "EMPRESA NOVA")
    assert RC2_40_OID_DER not in modern.pfx


def test_save_and_load_reuse_the_ca(pki: TestPki, tmp_path: Path) -> None:
    pki.save(tmp_path / "pki")
    again = TestPki.load(tmp_path / "pki")
    assert again.ca_cert_pem == pki.ca_cert_pem
    issued = again.company_cert("12345678000195", "EMPRESA")
    assert issued_by(x509.load_pem_x509_certificate(issued.cert_pem), pki.ca_certificate)
    if os.name == "posix":
        key_files = [p for p in (tmp_path / "pki").iterdir() if b"PRIVATE KEY" in p.read_bytes()]
        assert len(key_files) == 1
        assert stat.S_IMODE(key_files[0].stat().st_mode) == 0o600


def test_each_pki_is_a_different_authority(pki: TestPki) -> None:
    other = TestPki.create(now=NOV_2026)
    cert = x509.load_pem_x509_certificate(other.company_cert("12345678000195", "E").cert_pem)
    with pytest.raises(Exception):  # noqa: B017 - InvalidSignature from cryptography
        issued_by(cert, pki.ca_certificate)


def test_long_names_are_cut_so_the_common_name_fits_64_characters(pki: TestPki) -> None:
    long_name = "COMERCIO E INDUSTRIA DE PRODUTOS ALIMENTICIOS REUNIDOS DO BRASIL LTDA"
    issued = pki.company_cert("12345678000195", long_name)
    assert len(issued.common_name) == 64
    assert issued.common_name.endswith(":12345678000195")
    assert long_name.startswith(issued.common_name.split(":")[0])
    assert len(pki.person_cert("52998224725", long_name, cn_style=False).common_name) == 64
