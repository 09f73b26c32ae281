"""Keeping A1 certificates between runs without any secret in clear on disk.

Once ``load_a1`` has validated a PFX, its parts (PKCS#8 private key, leaf certificate, chain, all
DER) are stored AES-256-GCM-encrypted under ``data_dir/certificates/<CNPJ>.pfx.enc`` with the
CNPJ (or CPF) as associated data; the 32-byte data key lives in the OS keyring (Windows Credential
Manager, macOS Keychain, Secret Service on Linux). The split exists because the Windows Credential
Manager refuses secrets over 2,560 bytes, and a certificate is larger.

Loading skips the RSA key validation of a PFX (~50 ms per certificate, 10 s for 200 companies):
the authenticated encryption guarantees the bytes are exactly those ``store`` validated.
Files of the first format (``CDFE-PFX1``: the PFX itself, its password in the keyring as well)
still load that way (a load never writes); storing the certificate again upgrades them.

The keyring is one per user account, the data folders many (a second folder on the same desktop,
two workstations' folders tried on one machine, a copy): each folder's entries carry its own id
(``certificates/cofre.id``, random, made on the first store), so storing a company's certificate
in one folder never replaces the key another folder's file was sealed with. Entries stored before
the id existed (``<CNPJ>:pfx-key``) are still read when the folder's own entry is missing.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import secrets
import struct
import tempfile
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import keyring
import keyring.backends.fail
import keyring.backends.null
from cryptography import x509
from cryptography.exceptions import InvalidTag, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

from app.certs.a1 import A1Certificate, a1_from_parts, load_a1
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.ids import Cnpj, Cpf, parse_taxpayer

_MAGIC_V1 = b"CDFE-PFX1"  # payload: the PFX; its password in the keyring
_MAGIC = b"CDFE-A1K2"  # payload: length-prefixed DERs of PKCS#8 key, leaf certificate, chain
_NONCE_SIZE = 12
_SUFFIX = ".pfx.enc"
_KEY_ENTRY = "pfx-key"
_PASSWORD_ENTRY = "pfx-password"  # noqa: S105 - entry name; only v1 files need the password
_FOLDER_ID = "cofre.id"  # this data folder's namespace in the user's keyring
_LENGTH = struct.Struct(">I")
# Two stores of one process never interleave their key and file replacements.
_WRITE_LOCK = threading.Lock()


class VaultError(CapturaError):
    """Base of the certificate store's errors."""


class NoSecureStorage(VaultError):
    def __init__(self, what: str = "o certificado") -> None:
        """``what`` is kept there: the certificate, or the ERP hand-off's signing secret."""
        super().__init__(
            f"Não há um cofre de senhas seguro disponível neste computador para guardar {what}. "
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
        self._folder: str | None = None

    def _path(self, holder_id: str) -> Path:
        return self.directory / f"{holder_id}{_SUFFIX}"

    def folder_id(self, *, create: bool = False) -> str | None:
        """This folder's namespace in the keyring (see the module); None before its first store."""
        if self._folder is not None:
            return self._folder
        path = self.directory / _FOLDER_ID
        try:
            self._folder = path.read_text(encoding="ascii").strip() or None
        except FileNotFoundError:
            if not create:
                return None
            tmp = self._write_temp("cofre", secrets.token_hex(8).encode("ascii"))
            try:
                os.link(tmp, path)  # atomic and never replacing: two first stores agree on one id
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links (FAT): the id as it can
                if not path.exists():
                    os.replace(tmp, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            self._folder = path.read_text(encoding="ascii").strip()
        return self._folder

    def _entry(self, holder_id: str, entry: str, *, create: bool = False) -> str:
        folder = self.folder_id(create=create)
        return f"{folder}:{holder_id}:{entry}" if folder else f"{holder_id}:{entry}"

    def store(self, pfx: bytes, password: str, now: datetime) -> A1Certificate:
        """Validates the PFX (raises the app.certs.a1 errors), then keeps it. Replaces a previous one."""
        a1 = load_a1(pfx, password, now=now)
        holder = a1.holder_id
        _require_secure_backend()
        data_key = AESGCM.generate_key(bit_length=256)
        blob = _seal(data_key, holder, _pack(a1))
        key_entry = self._entry(holder, _KEY_ENTRY, create=True)
        was_v1 = self._first_format(holder)
        with _WRITE_LOCK:
            previous = self._get(key_entry)
            tmp = self._write_temp(holder, blob)
            try:
                # The key first, then the file appears atomically; on failure the previous key
                # goes back so a certificate stored before stays readable.
                try:
                    self._set(key_entry, base64.b64encode(data_key).decode("ascii"))
                    os.replace(tmp, self._path(holder))
                except BaseException:
                    self._restore({key_entry: previous})
                    raise
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        if was_v1:  # its password (shared by name with other folders' v1 files): useless from now on
            self._forget_password(holder)
        return a1

    def _first_format(self, holder_id: str) -> bool:
        try:
            with self._path(holder_id).open("rb") as stored:
                return stored.read(len(_MAGIC_V1)) == _MAGIC_V1
        except FileNotFoundError:
            return False

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
        encoded_key = self._get(self._entry(holder_id, _KEY_ENTRY))
        if encoded_key is None:  # stored before the folder had its own entries
            encoded_key = self._get(f"{holder_id}:{_KEY_ENTRY}")
        v1 = blob.startswith(_MAGIC_V1)
        password = self._get(f"{holder_id}:{_PASSWORD_ENTRY}") if v1 else ""
        if encoded_key is None or password is None:
            raise CertificateNotFound(
                f"A chave de proteção do certificado de {holder_id} não está no cofre de senhas do "
                "sistema (o cofre foi limpo ou o arquivo veio de outro computador). "
                "Instale o certificado A1 novamente."
            )
        try:
            data_key = base64.b64decode(encoded_key, validate=True)
            payload = _open_sealed(data_key, holder_id, blob, _MAGIC_V1 if v1 else _MAGIC)
            parts = None if v1 else _unpack(payload)
        except (InvalidTag, ValueError, binascii.Error, UnsupportedAlgorithm):
            raise TamperedCertificateFile(
                f"O arquivo guardado do certificado de {holder_id} foi alterado ou está danificado "
                f"({path.name}). Instale o certificado A1 novamente."
            ) from None
        if parts is not None:
            return a1_from_parts(*parts, now=now)
        # A file of the first format keeps loading this way (re-storing the certificate upgrades
        # it): a load never writes, so it cannot race a store made by another process.
        return load_a1(payload, password, now=now)

    def _write_temp(self, holder_id: str, blob: bytes) -> str:
        """The blob in a synced temporary file next to its final place (for an atomic os.replace)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{holder_id}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return tmp

    def _forget_password(self, holder_id: str) -> None:
        with contextlib.suppress(KeyringError):
            keyring.delete_password(self.service_name, f"{holder_id}:{_PASSWORD_ENTRY}")

    def remove(self, holder: Cnpj | Cpf | str) -> None:
        """The certificate file and this folder's entries; the entries of before the folder's
        own id only when it had none for this holder (they were its own then)."""
        holder_id = _holder_id(holder)
        with contextlib.suppress(FileNotFoundError):
            self._path(holder_id).unlink()
        own = self._entry(holder_id, _KEY_ENTRY)
        shared = [f"{holder_id}:{_KEY_ENTRY}", f"{holder_id}:{_PASSWORD_ENTRY}"]
        try:
            used_shared = own in shared or self._get(own) is None
        except VaultError:  # no keyring to read: nothing to delete there either
            used_shared = False
        for name in dict.fromkeys([own, *(shared if used_shared else [])]):
            with contextlib.suppress(PasswordDeleteError, NoKeyringError):
                keyring.delete_password(self.service_name, name)

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
        keep_secret(self.service_name, username, secret)

    def _restore(self, previous: dict[str, str | None]) -> None:
        for name, secret in previous.items():
            with contextlib.suppress(KeyringError):
                if secret is None:
                    with contextlib.suppress(PasswordDeleteError):
                        keyring.delete_password(self.service_name, name)
                else:
                    keyring.set_password(self.service_name, name, secret)

    def _get(self, username: str) -> str | None:
        return read_secret(self.service_name, username)


def keep_secret(service_name: str, entry: str, secret: str, what: str = "o certificado") -> None:
    """Keep ``secret`` in the OS keyring under ``entry`` and read it back (a backend that accepts
    and forgets is no storage); ``what`` names it in the errors."""
    try:
        keyring.set_password(service_name, entry, secret)
        stored = keyring.get_password(service_name, entry)
    except NoKeyringError:
        raise NoSecureStorage(what) from None
    except KeyringError as exc:
        raise SecureStorageFailed(f"O cofre de senhas do sistema recusou guardar {what}: {exc}") from None
    if stored != secret:  # e.g. the null backend accepts and forgets
        raise NoSecureStorage(what)


def read_secret(service_name: str, entry: str, what: str = "o certificado") -> str | None:
    """The secret kept under ``entry``, or None when there is none."""
    try:
        return keyring.get_password(service_name, entry)
    except NoKeyringError:
        raise NoSecureStorage(what) from None
    except KeyringError as exc:
        raise SecureStorageFailed(f"O cofre de senhas do sistema não pôde ser lido: {exc}") from None


# keyrings.alt (installed for the tests) holds secrets in plain or weakly protected files; keyring
# picks one by itself on a machine without a Secret Service, so the vault refuses them by name.
_INSECURE_MODULES = ("keyrings.alt",)


def _require_secure_backend() -> None:
    backend = keyring.get_keyring()
    if isinstance(backend, keyring.backends.fail.Keyring | keyring.backends.null.Keyring):
        raise NoSecureStorage()
    if type(backend).__module__.startswith(_INSECURE_MODULES):
        raise NoSecureStorage()


def _seal(data_key: bytes, holder_id: str, payload: bytes) -> bytes:
    nonce = secrets.token_bytes(_NONCE_SIZE)
    return _MAGIC + nonce + AESGCM(data_key).encrypt(nonce, payload, holder_id.encode("ascii"))


def _open_sealed(data_key: bytes, holder_id: str, blob: bytes, magic: bytes) -> bytes:
    """The authenticated payload; InvalidTag for any other file, key or holder."""
    if not blob.startswith(magic):
        raise InvalidTag
    nonce = blob[len(magic) : len(magic) + _NONCE_SIZE]
    return AESGCM(data_key).decrypt(nonce, blob[len(magic) + _NONCE_SIZE :], holder_id.encode("ascii"))


def _pack(a1: A1Certificate) -> bytes:
    key_der = a1.private_key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    parts = [key_der, a1.certificate.public_bytes(serialization.Encoding.DER)]
    parts += [cert.public_bytes(serialization.Encoding.DER) for cert in a1.chain]
    return b"".join(_LENGTH.pack(len(part)) + part for part in parts)


def _unpack(payload: bytes) -> tuple[PrivateKeyTypes, x509.Certificate, Sequence[x509.Certificate]]:
    parts: list[bytes] = []
    offset = 0
    while offset < len(payload):
        if offset + _LENGTH.size > len(payload):
            raise ValueError("truncated length")
        (size,) = _LENGTH.unpack_from(payload, offset)
        offset += _LENGTH.size
        if offset + size > len(payload):
            raise ValueError("truncated part")
        parts.append(payload[offset : offset + size])
        offset += size
    if len(parts) < 2:
        raise ValueError("missing key or certificate")
    # store() validated this very key with load_a1 and the AEAD proves the bytes are unchanged:
    # the primality checks (~50 ms for RSA-2048) would only repeat that work.
    key = serialization.load_der_private_key(parts[0], password=None, unsafe_skip_rsa_key_validation=True)
    cert = x509.load_der_x509_certificate(parts[1])
    return key, cert, [x509.load_der_x509_certificate(der) for der in parts[2:]]
