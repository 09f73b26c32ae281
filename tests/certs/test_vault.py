from __future__ import annotations

import base64
import configparser
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import keyring.backends.null
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import pkcs12
from keyrings.alt.escape import unescape

from app.certs.a1 import A1Certificate, CertificateExpired, CertificateNotYetValid, WrongPassword
from app.certs.vault import (
    CertificateNotFound,
    CertificateVault,
    NoSecureStorage,
    TamperedCertificateFile,
)
from app.core.ids import Cnpj, Cpf
from app.sandbox.pki import IssuedCert, TestPki

WINDOWS_BLOB_LIMIT = 2560  # CRED_MAX_CREDENTIAL_BLOB_SIZE, in bytes of UTF-16


def now() -> datetime:
    return datetime.now(UTC)


def keyring_entries() -> dict[tuple[str, str], str]:
    """Everything the test keyring (TestKeyring from tests/conftest.py) holds."""
    ring = keyring.get_keyring()
    path = Path(ring.file_path)  # type: ignore[attr-defined]
    parser = configparser.RawConfigParser()
    parser.read(path, encoding="utf-8")
    return {
        (unescape(section), unescape(option)): base64.b64decode(parser.get(section, option)).decode("utf-8")
        for section in parser.sections()
        for option in parser.options(section)
    }


def private_numbers(a1: A1Certificate) -> object:
    key = a1.private_key
    assert isinstance(key, rsa.RSAPrivateKey)
    return key.private_numbers()


def private_key_ders(issued: IssuedCert) -> list[bytes]:
    key = serialization.load_pem_private_key(issued.key_pem, password=None)
    return [
        key.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
        for fmt in (serialization.PrivateFormat.PKCS8, serialization.PrivateFormat.TraditionalOpenSSL)
    ]


def test_round_trip_keeps_no_secret_in_clear(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    stored = vault.store(company.pfx, company.password, now())

    assert vault.list() == [Cnpj("12345678000195")]
    loaded = vault.load(Cnpj("12345678000195"), now())
    assert loaded == stored
    assert loaded.certificate.public_key() == loaded.private_key.public_key()
    assert vault.load("12.345.678/0001-95", now()).serial == stored.serial

    files = sorted(p.name for p in (data_dir / "certificates").iterdir())
    assert files == ["12345678000195.pfx.enc", "cofre.id"]  # the id: this folder's keyring entries
    blob = (data_dir / "certificates" / "12345678000195.pfx.enc").read_bytes()
    assert company.pfx not in blob
    assert company.password.encode() not in blob
    for der in private_key_ders(company):
        assert der not in blob and der[:64] not in blob
    assert b"PRIVATE KEY" not in blob


def test_keyring_holds_only_the_small_data_key(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())

    entries = keyring_entries()
    own = ("CapturaDFe", f"{vault.folder_id()}:12345678000195:pfx-key")  # this data folder's
    assert set(entries) == {own}  # the PFX password is not kept
    for secret in entries.values():
        assert len(secret.encode("utf-16-le")) <= WINDOWS_BLOB_LIMIT
    assert len(base64.b64decode(entries[own])) == 32
    assert company.password not in str(entries)
    assert len(company.pfx) * 2 > WINDOWS_BLOB_LIMIT  # why the certificate itself is not in the keyring


@pytest.mark.parametrize("where", ["magic", "nonce", "middle", "tag"])
def test_tampered_file_is_reported(data_dir: Path, company: IssuedCert, where: str) -> None:
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())
    path = data_dir / "certificates" / "12345678000195.pfx.enc"
    blob = bytearray(path.read_bytes())
    blob[{"magic": 8, "nonce": 12, "middle": len(blob) // 2, "tag": len(blob) - 1}[where]] ^= 0x01
    path.write_bytes(bytes(blob))

    with pytest.raises(TamperedCertificateFile) as caught:
        vault.load("12345678000195", now())
    assert caught.value.message == (
        "O arquivo guardado do certificado de 12345678000195 foi alterado ou está danificado "
        "(12345678000195.pfx.enc). Instale o certificado A1 novamente."
    )


def test_file_moved_to_another_cnpj_fails_by_associated_data(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())
    other = "11222333000181"
    folder = data_dir / "certificates"
    (folder / f"{other}.pfx.enc").write_bytes((folder / "12345678000195.pfx.enc").read_bytes())
    secret = keyring.get_password("CapturaDFe", f"{vault.folder_id()}:12345678000195:pfx-key")
    assert secret is not None
    keyring.set_password("CapturaDFe", f"{vault.folder_id()}:{other}:pfx-key", secret)

    with pytest.raises(TamperedCertificateFile):
        vault.load(other, now())


def test_wrong_password_stores_nothing(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    with pytest.raises(WrongPassword):
        vault.store(company.pfx, "errada", now())
    assert vault.list() == []
    assert keyring_entries() == {}


def test_expired_certificate_is_refused_on_store_and_load(data_dir: Path, pki: TestPki) -> None:
    soon = now() + timedelta(days=2)
    issued = pki.company_cert("12345678000195", "EMPRESA", not_after=soon)
    vault = CertificateVault(data_dir)
    vault.store(issued.pfx, "1234", now())
    with pytest.raises(CertificateExpired):
        vault.load("12345678000195", soon + timedelta(seconds=1))
    with pytest.raises(CertificateExpired):
        vault.store(issued.pfx, "1234", soon)


def test_not_yet_valid_at_load_time_is_refused(data_dir: Path, pki: TestPki) -> None:
    start = now() - timedelta(minutes=5)
    issued = pki.company_cert("12345678000195", "EMPRESA", not_before=start)
    vault = CertificateVault(data_dir)
    vault.store(issued.pfx, "1234", now())
    with pytest.raises(CertificateNotYetValid) as caught:
        vault.load("12345678000195", start - timedelta(days=1))
    assert "data e a hora deste computador" in caught.value.message


@pytest.mark.parametrize("backend", [keyring.backends.fail.Keyring, keyring.backends.null.Keyring])
def test_no_secure_storage(data_dir: Path, company: IssuedCert, backend: type) -> None:
    keyring.set_keyring(backend())
    vault = CertificateVault(data_dir)
    with pytest.raises(NoSecureStorage) as caught:
        vault.store(company.pfx, company.password, now())
    assert "Não há um cofre de senhas seguro disponível" in caught.value.message
    assert "Secret Service" in caught.value.message and "GNOME Keyring" in caught.value.message
    assert not (data_dir / "certificates").exists() or not any((data_dir / "certificates").iterdir())


def test_load_unknown_and_missing_keyring_entry(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    with pytest.raises(CertificateNotFound) as caught:
        vault.load("12345678000195", now())
    assert "Nenhum certificado instalado para 12345678000195" in caught.value.message

    vault.store(company.pfx, company.password, now())
    keyring.delete_password("CapturaDFe", f"{vault.folder_id()}:12345678000195:pfx-key")
    with pytest.raises(CertificateNotFound) as caught:
        vault.load("12345678000195", now())
    assert "não está no cofre de senhas do sistema" in caught.value.message


def test_remove_deletes_file_and_secrets(data_dir: Path, company: IssuedCert, pki: TestPki) -> None:
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())
    person = pki.person_cert("52998224725", "FULANO")
    vault.store(person.pfx, "1234", now())
    assert vault.list() == [Cnpj("12345678000195"), Cpf("52998224725")]

    vault.remove(Cnpj("12345678000195"))

    assert vault.list() == [Cpf("52998224725")]
    assert {user for _, user in keyring_entries()} == {f"{vault.folder_id()}:52998224725:pfx-key"}
    with pytest.raises(CertificateNotFound):
        vault.load("12345678000195", now())
    vault.remove("12345678000195")  # removing twice is harmless


def test_renewal_replaces_and_failed_replace_keeps_the_old_one(
    data_dir: Path, company: IssuedCert, pki: TestPki, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = CertificateVault(data_dir)
    first = vault.store(company.pfx, company.password, now())
    renewed = pki.company_cert("12345678000195", "EMPRESA TESTE LTDA", password="nova")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disco cheio")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disco cheio"):
        vault.store(renewed.pfx, "nova", now())
    monkeypatch.undo()
    assert vault.load("12345678000195", now()).serial == first.serial
    assert sorted(p.name for p in (data_dir / "certificates").iterdir()) == ["12345678000195.pfx.enc", "cofre.id"]

    second = vault.store(renewed.pfx, "nova", now())
    assert second.serial != first.serial
    assert vault.load("12345678000195", now()).serial == second.serial


def test_service_name_separates_entries(data_dir: Path, company: IssuedCert) -> None:
    CertificateVault(data_dir, service_name="OutroApp").store(company.pfx, company.password, now())
    assert {service for service, _ in keyring_entries()} == {"OutroApp"}


def test_file_format_holds_parts_not_the_pfx(data_dir: Path, company: IssuedCert) -> None:
    vault = CertificateVault(data_dir)
    stored = vault.store(company.pfx, company.password, now())
    blob = (data_dir / "certificates" / "12345678000195.pfx.enc").read_bytes()
    assert blob.startswith(b"CDFE-A1K2")
    assert stored.certificate.public_bytes(serialization.Encoding.DER) not in blob  # encrypted too

    loaded = vault.load("12345678000195", now())
    assert loaded.chain == stored.chain and len(loaded.chain) == 1
    assert loaded.certificate == stored.certificate
    assert private_numbers(loaded) == private_numbers(stored)


def test_load_skips_the_rsa_key_validation(
    data_dir: Path, company: IssuedCert, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())
    calls: list[dict[str, object]] = []
    real_loader = serialization.load_der_private_key

    def spy(data: bytes, password: bytes | None, **kwargs: Any) -> PrivateKeyTypes:
        calls.append(kwargs)
        return real_loader(data, password, **kwargs)

    def no_pkcs12(*args: object, **kwargs: object) -> None:
        raise AssertionError("load must not open a PFX (it validates the RSA key)")

    monkeypatch.setattr(serialization, "load_der_private_key", spy)
    monkeypatch.setattr(pkcs12, "load_key_and_certificates", no_pkcs12)
    loaded = vault.load("12345678000195", now())

    assert calls == [{"unsafe_skip_rsa_key_validation": True}]
    assert loaded.certificate.public_key() == loaded.private_key.public_key()


def write_v1(data_dir: Path, issued: IssuedCert, holder: str) -> Path:
    """A certificate as the first vault format kept it: the PFX itself, the password in the keyring."""
    data_key = AESGCM.generate_key(bit_length=256)
    nonce = os.urandom(12)
    folder = data_dir / "certificates"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{holder}.pfx.enc"
    path.write_bytes(b"CDFE-PFX1" + nonce + AESGCM(data_key).encrypt(nonce, issued.pfx, holder.encode()))
    keyring.set_password("CapturaDFe", f"{holder}:pfx-key", base64.b64encode(data_key).decode())
    keyring.set_password("CapturaDFe", f"{holder}:pfx-password", issued.password)
    return path


def test_v1_file_still_loads_and_is_left_as_it_is(data_dir: Path, company: IssuedCert) -> None:
    path = write_v1(data_dir, company, "12345678000195")
    blob = path.read_bytes()
    vault = CertificateVault(data_dir)

    first = vault.load("12345678000195", now())

    assert first.holder_id == "12345678000195" and len(first.chain) == 1
    assert path.read_bytes() == blob  # a load never writes
    assert keyring.get_password("CapturaDFe", "12345678000195:pfx-password") == company.password
    assert private_numbers(vault.load("12345678000195", now())) == private_numbers(first)


def test_v1_file_errors_are_unchanged(data_dir: Path, company: IssuedCert) -> None:
    path = write_v1(data_dir, company, "12345678000195")
    vault = CertificateVault(data_dir)
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.raises(TamperedCertificateFile):
        vault.load("12345678000195", now())
    assert path.read_bytes() == bytes(blob)  # nothing upgraded

    write_v1(data_dir, company, "12345678000195")
    keyring.delete_password("CapturaDFe", "12345678000195:pfx-password")
    with pytest.raises(CertificateNotFound) as caught:
        vault.load("12345678000195", now())
    assert "não está no cofre de senhas do sistema" in caught.value.message


def test_storing_over_a_v1_file_drops_its_password(data_dir: Path, company: IssuedCert) -> None:
    write_v1(data_dir, company, "12345678000195")
    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, now())
    entries = keyring_entries()
    assert ("CapturaDFe", "12345678000195:pfx-password") not in entries
    assert ("CapturaDFe", f"{vault.folder_id()}:12345678000195:pfx-key") in entries
    assert vault.load("12345678000195", now()).holder_id == "12345678000195"


def test_two_data_folders_of_one_user_keep_the_same_company_apart(tmp_path: Path, company: IssuedCert) -> None:
    """One keyring per user account, many data folders: storing a company's certificate in a
    second folder leaves the first folder's readable (it replaced the first one's key before,
    and the first folder's capture stopped at "arquivo alterado ou danificado")."""
    first, second = CertificateVault(tmp_path / "pasta-1"), CertificateVault(tmp_path / "pasta-2")
    first.store(company.pfx, company.password, now())
    second.store(company.pfx, company.password, now())
    assert first.folder_id() and second.folder_id() and first.folder_id() != second.folder_id()
    assert first.load("12345678000195", now()).serial == second.load("12345678000195", now()).serial
    second.remove("12345678000195")
    assert first.load("12345678000195", now()).holder_id == "12345678000195"
    assert second.list() == [] and len(keyring_entries()) == 1
    # A vault opened again on the first folder finds its id in the folder.
    assert CertificateVault(tmp_path / "pasta-1").load("12345678000195", now()).holder_id == "12345678000195"


def test_a_folder_stored_before_its_id_still_loads_beside_a_newer_one(tmp_path: Path, company: IssuedCert) -> None:
    """Entries of before the folder id (``<CNPJ>:pfx-key``) are read when the folder has no own
    entry; a newer folder storing the same company does not touch them."""
    old = CertificateVault(tmp_path / "antiga")
    old.store(company.pfx, company.password, now())
    own = f"{old.folder_id()}:12345678000195:pfx-key"
    secret = keyring.get_password("CapturaDFe", own)
    assert secret is not None
    keyring.set_password("CapturaDFe", "12345678000195:pfx-key", secret)  # as the older version kept it
    keyring.delete_password("CapturaDFe", own)
    (tmp_path / "antiga" / "certificates" / "cofre.id").unlink()
    before = CertificateVault(tmp_path / "antiga")
    assert before.folder_id() is None
    CertificateVault(tmp_path / "nova").store(company.pfx, company.password, now())
    assert before.load("12345678000195", now()).holder_id == "12345678000195"
    before.remove("12345678000195")  # its entries were the shared ones: removed with it
    assert ("CapturaDFe", "12345678000195:pfx-key") not in keyring_entries()
    assert CertificateVault(tmp_path / "nova").load("12345678000195", now()).holder_id == "12345678000195"


def test_the_plaintext_keyrings_of_keyrings_alt_are_refused(
    data_dir: Path, company: IssuedCert, tmp_path: Path
) -> None:
    """keyring picks keyrings.alt's file backend by itself where no Secret Service runs: the
    certificate's secrets would sit in a plain file, so the vault refuses it."""
    from keyrings.alt.file import PlaintextKeyring

    ring = PlaintextKeyring()
    ring.file_path = str(tmp_path / "plain.cfg")  # type: ignore[misc]
    keyring.set_keyring(ring)  # the autouse fixture puts the test keyring back
    with pytest.raises(NoSecureStorage):
        CertificateVault(data_dir).store(company.pfx, company.password, now())
    assert not (tmp_path / "plain.cfg").exists()


def test_the_tests_keyring_is_one_per_xdg_data_home_on_windows_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workstations of one test (two processes, two XDG_DATA_HOME) keep apart secrets under
    the same names, also where keyring's own folder is Windows' (LOCALAPPDATA, one per user)."""
    from keyring.util import platform_

    from tests.support.test_keyring import TestKeyring

    windows_folder = tmp_path / "LocalAppData" / "Python Keyring"
    monkeypatch.setattr(platform_, "data_root", lambda: windows_folder)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "estacao-a"))
    a = TestKeyring()
    a.set_password("captura-dfe", "cofre", "segredo de A")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "estacao-b"))
    b = TestKeyring()
    b.set_password("captura-dfe", "cofre", "segredo de B")
    assert a.get_password("captura-dfe", "cofre") == "segredo de A"
    assert b.get_password("captura-dfe", "cofre") == "segredo de B"
    assert not windows_folder.exists()
