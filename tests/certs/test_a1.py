from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from app.certs import pkcs12_der
from app.certs.a1 import (
    A1Certificate,
    CertificateExpired,
    CertificateNotYetValid,
    InvalidCertificateFile,
    LegacyEncryption,
    NotIcpBrasilCnpj,
    WrongPassword,
    a1_from_parts,
    load_a1,
)
from app.core.errors import CapturaError
from app.core.ids import Cnpj, Cpf
from app.sandbox.pki import IssuedCert, TestPki
from tests.support.legacy_pfx import PASSWORD, legacy_pfx

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOV_2026 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def now() -> datetime:
    return datetime.now(UTC)


def test_valid_e_cnpj_gives_identity_and_keeps_key_out_of_repr(company: IssuedCert) -> None:
    a1 = load_a1(company.pfx, company.password, now=now())

    assert a1.cnpj == Cnpj("12345678000195")
    assert a1.cpf is None
    assert a1.holder_id == "12345678000195"
    assert a1.holder_name == "EMPRESA TESTE LTDA"
    assert a1.common_name == "EMPRESA TESTE LTDA:12345678000195"
    assert a1.issuer == "AC de Teste Captura DF-e"
    assert len(a1.sha1_fingerprint) == 40 and len(a1.sha256_fingerprint) == 64
    assert a1.not_before < now() < a1.not_after
    assert len(a1.chain) == 1 and a1.chain[0].subject.rfc4514_string().startswith("CN=AC de Teste Captura DF-e,")
    assert a1.certificate.public_key() == a1.private_key.public_key()

    text = repr(a1) + str(a1)
    assert "12345678000195" in text
    assert "private" not in text.lower() and "RSAPrivateKey" not in text
    key_der = a1.private_key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert key_der.hex() not in text


def test_describe_gives_portuguese_lines(company: IssuedCert) -> None:
    a1 = load_a1(company.pfx, company.password, now=now())
    lines = a1.describe()
    assert lines[0] == "Titular: EMPRESA TESTE LTDA"
    assert lines[1] == "CNPJ: 12.345.678/0001-95"
    assert lines[2] == "Emitido por: AC de Teste Captura DF-e"
    assert lines[3].startswith("Válido de ") and " até " in lines[3]
    assert any(line.startswith("Impressão digital (SHA-1): ") for line in lines)


def test_alphanumeric_cnpj(pki: TestPki) -> None:
    issued = pki.company_cert("12abc34501de35", "EMPRESA ALFANUMERICA SA")
    a1 = load_a1(issued.pfx, "1234", now=now())
    assert a1.cnpj == Cnpj("12ABC34501DE35")
    assert a1.cnpj.is_alphanumeric
    assert "CNPJ: 12.ABC.345/01DE-35" in a1.describe()


def test_expired_certificate_names_the_brasilia_date() -> None:
    pki = TestPki.create(now=NOV_2026)
    # 01:30 UTC on the 13th is still the 12th in Brasília
    issued = pki.company_cert("12345678000195", "EMPRESA", not_after=datetime(2026, 3, 13, 1, 30, tzinfo=UTC))
    with pytest.raises(CertificateExpired) as caught:
        load_a1(issued.pfx, "1234", now=NOV_2026)
    assert caught.value.message.startswith("Certificado vencido em 12/03/2026.")
    assert isinstance(caught.value, CapturaError)
    assert str(caught.value) == caught.value.message


def test_expiry_is_checked_against_the_given_now(pki: TestPki) -> None:
    issued = pki.company_cert("12345678000195", "EMPRESA", not_after=NOV_2026 + timedelta(days=1))
    assert load_a1(issued.pfx, "1234", now=NOV_2026).days_left(NOV_2026) == 1
    with pytest.raises(CertificateExpired):
        load_a1(issued.pfx, "1234", now=NOV_2026 + timedelta(days=1))


def test_not_yet_valid_certificate(pki: TestPki) -> None:
    issued = pki.company_cert("12345678000195", "EMPRESA", not_before=datetime(2027, 1, 10, 12, tzinfo=UTC))
    with pytest.raises(CertificateNotYetValid) as caught:
        load_a1(issued.pfx, "1234", now=NOV_2026)
    assert "ainda não é válido" in caught.value.message
    assert "10/01/2027" in caught.value.message
    assert "data e a hora deste computador" in caught.value.message


def test_wrong_password(company: IssuedCert) -> None:
    with pytest.raises(WrongPassword) as caught:
        load_a1(company.pfx, "senha errada", now=now())
    assert caught.value.message == "Senha do certificado incorreta."


@pytest.mark.parametrize(
    "data",
    [b"", b"isto nao e um certificado" * 20, b"\x30\x82\x01\x00" + b"\x00" * 10],
    ids=["empty", "text", "truncated-der"],
)
def test_garbage_is_not_a_certificate_file(data: bytes) -> None:
    with pytest.raises(InvalidCertificateFile) as caught:
        load_a1(data, "1234", now=now())
    assert "não é um certificado digital A1 (.pfx ou .p12)" in caught.value.message


def test_pem_certificate_instead_of_pfx_is_refused(company: IssuedCert) -> None:
    with pytest.raises(InvalidCertificateFile):
        load_a1(company.cert_pem, "1234", now=now())


def test_pfx_without_private_key_is_refused(pki: TestPki) -> None:
    only_certs = pkcs12.serialize_key_and_certificates(
        b"ca", None, None, [pki.ca_certificate], serialization.BestAvailableEncryption(b"1234")
    )
    with pytest.raises(InvalidCertificateFile) as caught:
        load_a1(only_certs, "1234", now=now())
    assert "não contém a chave privada" in caught.value.message


def test_cn_style_without_cnpj_oid_is_accepted(pki: TestPki) -> None:
    issued = pki.company_cert("11222333000181", "EMPRESA SEM OID LTDA", include_cnpj_oid=False)
    a1 = load_a1(issued.pfx, "1234", now=now())
    assert a1.cnpj == Cnpj("11222333000181")
    assert a1.holder_name == "EMPRESA SEM OID LTDA"


def test_cnpj_from_oid_wins_over_common_name(pki: TestPki) -> None:
    issued = pki.company_cert("12345678000195", "OUTRA EMPRESA:11222333000181", cn_style=False)
    a1 = load_a1(issued.pfx, "1234", now=now())
    assert a1.cnpj == Cnpj("12345678000195")
    assert a1.holder_name == "OUTRA EMPRESA"


def test_certificate_without_cnpj_is_refused(pki: TestPki) -> None:
    issued = pki.company_cert("12345678000195", "EMPRESA COMUM", include_cnpj_oid=False, cn_style=False)
    with pytest.raises(NotIcpBrasilCnpj) as caught:
        load_a1(issued.pfx, "1234", now=now())
    assert caught.value.message.startswith("O certificado 'EMPRESA COMUM' não é um e-CNPJ ICP-Brasil")
    assert "2.16.76.1.3.3" in caught.value.message


def test_server_certificate_is_not_an_e_cnpj(pki: TestPki) -> None:
    with pytest.raises(NotIcpBrasilCnpj):
        load_a1(pki.server_cert().pfx, "1234", now=now())


def test_e_cpf_certificate(pki: TestPki) -> None:
    issued = pki.person_cert("529.982.247-25", "FULANO DE TAL", cn_style=False)
    a1 = load_a1(issued.pfx, "1234", now=now())
    assert a1.cpf == Cpf("52998224725")
    assert a1.cnpj is None
    assert a1.holder_id == "52998224725"
    assert "CPF: 529.982.247-25" in a1.describe()


def test_legacy_rc2_file_is_accepted_when_openssl_can_read_it() -> None:
    assert pkcs12_der.outline(legacy_pfx()).legacy_algorithms == ("pbeWithSHAAnd40BitRC2-CBC",)
    a1 = load_a1(legacy_pfx(), PASSWORD, now=now())
    assert a1.cnpj == Cnpj("12345678000195")
    assert len(a1.chain) == 1


def _load_in_child(pfx_path: Path, password: str) -> dict[str, str]:
    """load_a1 in a fresh interpreter where cryptography runs without OpenSSL's legacy provider."""
    script = (
        "import json, sys\n"
        "from datetime import UTC, datetime\n"
        "from pathlib import Path\n"
        "from app.certs.a1 import load_a1\n"
        "try:\n"
        "    a1 = load_a1(Path(sys.argv[1]).read_bytes(), sys.argv[2], now=datetime.now(UTC))\n"
        "    print(json.dumps({'ok': a1.holder_id}))\n"
        "except Exception as e:\n"
        "    print(json.dumps({'error': type(e).__name__, 'message': str(e)}))\n"
    )
    env = {**os.environ, "CRYPTOGRAPHY_OPENSSL_NO_LEGACY": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(pfx_path), password],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(done.stdout))


def test_legacy_rc2_file_explains_how_to_re_export_when_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "antigo.pfx"
    path.write_bytes(legacy_pfx())

    result = _load_in_child(path, PASSWORD)

    assert result["error"] == LegacyEncryption.__name__
    message = result["message"]
    assert "criptografia antiga e obsoleta (pbeWithSHAAnd40BitRC2-CBC)" in message
    assert "certmgr.msc" in message and "AES256-SHA256" in message
    assert "openssl pkcs12 -legacy" in message


def test_legacy_file_with_wrong_password_still_says_wrong_password(tmp_path: Path) -> None:
    path = tmp_path / "antigo.pfx"
    path.write_bytes(legacy_pfx())
    assert _load_in_child(path, "errada") == {
        "error": WrongPassword.__name__,
        "message": "Senha do certificado incorreta.",
    }


def test_a1certificate_requires_aware_now(company: IssuedCert) -> None:
    with pytest.raises(ValueError, match="aware"):
        load_a1(company.pfx, company.password, now=datetime(2026, 11, 2))


def test_equality_ignores_key_objects(company: IssuedCert) -> None:
    first: A1Certificate = load_a1(company.pfx, company.password, now=now())
    second = load_a1(company.pfx, company.password, now=now())
    assert first == second


def pfx_parts(issued: IssuedCert) -> tuple[PrivateKeyTypes, x509.Certificate, list[x509.Certificate]]:
    key, cert, chain = pkcs12.load_key_and_certificates(issued.pfx, issued.password.encode())
    assert key is not None and cert is not None
    return key, cert, chain


def test_a1_from_parts_gives_what_load_a1_gives(company: IssuedCert) -> None:
    key, cert, chain = pfx_parts(company)
    from_parts = a1_from_parts(key, cert, chain, now=now())
    from_pfx = load_a1(company.pfx, company.password, now=now())
    assert from_parts == from_pfx
    assert from_parts.chain == from_pfx.chain and from_parts.certificate == from_pfx.certificate
    assert from_parts.private_key is key


def test_a1_from_parts_runs_the_same_checks(pki: TestPki, company: IssuedCert) -> None:
    key, cert, chain = pfx_parts(company)
    other_key, _, _ = pfx_parts(pki.company_cert("11222333000181", "OUTRA"))
    with pytest.raises(InvalidCertificateFile) as caught:
        a1_from_parts(other_key, cert, chain, now=now())
    assert caught.value.message == "A chave privada do arquivo não corresponde ao certificado."

    with pytest.raises(CertificateExpired):
        a1_from_parts(key, cert, chain, now=cert.not_valid_after_utc)
    with pytest.raises(CertificateNotYetValid):
        a1_from_parts(key, cert, chain, now=cert.not_valid_before_utc - timedelta(seconds=1))
    with pytest.raises(ValueError, match="aware"):
        a1_from_parts(key, cert, chain, now=datetime(2026, 11, 2))

    server = pki.server_cert()
    server_key = serialization.load_pem_private_key(server.key_pem, password=None)
    with pytest.raises(NotIcpBrasilCnpj):
        a1_from_parts(server_key, x509.load_pem_x509_certificate(server.cert_pem), [], now=now())
