"""Keeping A1 certificates between runs without any secret in clear on disk.

The PFX is stored AES-256-GCM-encrypted under ``data_dir/certificates/<CNPJ>.pfx.enc`` with the
CNPJ (or CPF) as associated data; the 32-byte data key and the PFX password live in the OS
keyring (Windows Credential Manager, macOS Keychain, Secret Service on Linux). The split exists
because the Windows Credential Manager refuses secrets over 2,560 bytes, and a PFX is larger.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import secrets
import tempfile
from datetime import datetime
from pathlib import Path

import keyring
import keyring.backends.fail
import keyring.backends.null
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

from app.certs.a1 import A1Certificate, load_a1
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.ids import Cnpj, Cpf, parse_taxpayer

_MAGIC = b"CDFE-PFX1"
_NONCE_SIZE = 12
_SUFFIX = ".pfx.enc"


class VaultError(CapturaError):
    """Base of the certificate store's errors."""


class NoSecureStorage(VaultError):
    def __init__(self) -> None:
        super().__init__(
            "Não há um cofre de senhas seguro disponível neste computador para guardar o certificado. "
            "No Windows o Gerenciador de Credenciais é usado automaticamente; no Linux é preciso um "
            "serviço Secret Service ativo (por exemplo GNOME Keyring ou KWallet)."
        )


class SecureStorageFailed(VaultError):
    """The keyring exists but refused the operation (locked, access denied...)."""


class CertificateNotFound(VaultError):
    pass


class TamperedCertificateFile(VaultError):
    pass


def _holder_id(holder: Cnpj | Cpf | str) -> str:
    if isinstance(holder, Cnpj | Cpf):
        return holder.value
    return parse_taxpayer(holder).value


class CertificateVault:
    """Stores, loads and removes the A1 certificates of the office's client companies."""

    def __init__(self, data_dir: Path, service_name: str = "CapturaDFe") -> None:
        self.directory = data_dir / "certificates"
        self.service_name = service_name

    def _path(self, holder_id: str) -> Path:
        return self.directory / f"{holder_id}{_SUFFIX}"

    def store(self, pfx: bytes, password: str, now: datetime) -> A1Certificate:
        """Validates the PFX (raises the app.certs.a1 errors), then keeps it. Replaces a previous one."""
        a1 = load_a1(pfx, password, now=now)
        holder = a1.holder_id
        _require_secure_backend()
        data_key = AESGCM.generate_key(bit_length=256)
        nonce = secrets.token_bytes(_NONCE_SIZE)
        blob = _MAGIC + nonce + AESGCM(data_key).encrypt(nonce, pfx, holder.encode("ascii"))
        entries = {
            f"{holder}:pfx-key": base64.b64encode(data_key).decode("ascii"),
            f"{holder}:pfx-password": password,
        }
        previous = {name: self._get(name) for name in entries}
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{holder}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
                out.flush()
                os.fsync(out.fileno())
            # Secrets first, then the file appears atomically; on failure the previous secrets
            # go back so a certificate stored before stays readable.
            try:
                for name, secret in entries.items():
                    self._set(name, secret)
                os.replace(tmp, self._path(holder))
            except BaseException:
                self._restore(previous)
                raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return a1

    def load(self, holder: Cnpj | Cpf | str, now: datetime) -> A1Certificate:
        """Opens the stored certificate; expiry is checked against ``now`` like in ``store``."""
        holder_id = _holder_id(holder)
        path = self._path(holder_id)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise CertificateNotFound(
                f"Nenhum certificado instalado para {holder_id}. Instale o certificado A1 da empresa."
            ) from None
        encoded_key = self._get(f"{holder_id}:pfx-key")
        password = self._get(f"{holder_id}:pfx-password")
        if encoded_key is None or password is None:
            raise CertificateNotFound(
                f"A chave de proteção do certificado de {holder_id} não está no cofre de senhas do "
                "sistema (o cofre foi limpo ou o arquivo veio de outro computador). "
                "Instale o certificado A1 novamente."
            )
        try:
            data_key = base64.b64decode(encoded_key, validate=True)
            if not blob.startswith(_MAGIC):
                raise InvalidTag
            nonce = blob[len(_MAGIC) : len(_MAGIC) + _NONCE_SIZE]
            pfx = AESGCM(data_key).decrypt(nonce, blob[len(_MAGIC) + _NONCE_SIZE :], holder_id.encode())
        except (InvalidTag, ValueError, binascii.Error):
            raise TamperedCertificateFile(
                f"O arquivo guardado do certificado de {holder_id} foi alterado ou está danificado "
                f"({path.name}). Instale o certificado A1 novamente."
            ) from None
        return load_a1(pfx, password, now=now)

    def remove(self, holder: Cnpj | Cpf | str) -> None:
        holder_id = _holder_id(holder)
        with contextlib.suppress(FileNotFoundError):
            self._path(holder_id).unlink()
        for entry in ("pfx-key", "pfx-password"):
            with contextlib.suppress(PasswordDeleteError, NoKeyringError):
                keyring.delete_password(self.service_name, f"{holder_id}:{entry}")

    def list(self) -> list[Cnpj | Cpf]:
        """The holders with a stored certificate file, sorted."""
        if not self.directory.is_dir():
            return []
        found: list[Cnpj | Cpf] = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            with contextlib.suppress(InvalidIdentifier):
                found.append(parse_taxpayer(path.name.removesuffix(_SUFFIX)))
        return sorted(found, key=lambda h: h.value)

    def _set(self, username: str, secret: str) -> None:
        try:
            keyring.set_password(self.service_name, username, secret)
            stored = keyring.get_password(self.service_name, username)
        except NoKeyringError:
            raise NoSecureStorage() from None
        except KeyringError as exc:
            raise SecureStorageFailed(
                f"O cofre de senhas do sistema recusou guardar o certificado: {exc}"
            ) from None
        if stored != secret:  # e.g. the null backend accepts and forgets
            raise NoSecureStorage()

    def _restore(self, previous: dict[str, str | None]) -> None:
        for name, secret in previous.items():
            with contextlib.suppress(KeyringError):
                if secret is None:
                    with contextlib.suppress(PasswordDeleteError):
                        keyring.delete_password(self.service_name, name)
                else:
                    keyring.set_password(self.service_name, name, secret)

    def _get(self, username: str) -> str | None:
        try:
            return keyring.get_password(self.service_name, username)
        except NoKeyringError:
            raise NoSecureStorage() from None
        except KeyringError as exc:
            raise SecureStorageFailed(f"O cofre de senhas do sistema não pôde ser lido: {exc}") from None


def _require_secure_backend() -> None:
    backend = keyring.get_keyring()
    if isinstance(backend, keyring.backends.fail.Keyring | keyring.backends.null.Keyring):
        raise NoSecureStorage()
