"""Which database the desk opens: the data folder's SQLite file, or the office's PostgreSQL server.

``choose`` takes ``--database URL`` (or ``CAPTURA_DATABASE``) and remembers it in the data
folder's settings, the URL without its password, the password in the OS keyring (app.certs's
secret storage); ``sqlite`` goes back to the file. ``target`` is what ``Office`` opens, read by
the window, the commands and the daemon alike, so a workstation set up once stays on its server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from app.config.office_database import (
    ENV_DATABASE,
    OfficeDatabaseError,
    OfficeUrl,
    is_local_choice,
    parse_office_url,
)
from app.config.settings import load_settings, save_settings
from app.store.probe import OfficeConnectionFailed, probe

__all__ = [
    "KEPT",
    "TLS_LABELS",
    "OfficeConnectionFailed",
    "OfficeDatabaseError",
    "choose",
    "chosen",
    "office_url",
    "remember",
    "target",
    "test_connection",
]

KEYRING_SERVICE = "CapturaDFe"
# The TLS choices of Configurações, in libpq's sslmode words.
TLS_LABELS = {
    "prefer": "Usar se o servidor oferecer",
    "require": "Exigir",
    "verify-full": "Exigir e conferir o certificado do servidor",
    "disable": "Não usar",
}
KEPT = "a senha do banco do escritório"


def choose(data_dir: Path, given: str | None, environ: Mapping[str, str] = os.environ) -> OfficeUrl | None:
    """Remember ``given`` (else ``CAPTURA_DATABASE``) as the data folder's database; nothing given
    keeps what was remembered. Returns the office server chosen now, or None."""
    text = given if given is not None else environ.get(ENV_DATABASE) or None
    if text is None:
        return None
    if is_local_choice(text):
        remember(data_dir, None)
        return None
    url = parse_office_url(text)
    if url.password is not None:
        from app.certs.vault import keep_secret  # the keyring: only with a password to keep

        keep_secret(KEYRING_SERVICE, url.keyring_entry, url.password, KEPT)
        url = replace(url, password=None)
    remember(data_dir, url)
    return url


def remember(data_dir: Path, url: OfficeUrl | None, password: str | None = None) -> None:
    """Write the choice into ``settings.json`` (None: the SQLite file), ``password`` (if given) into
    the keyring; only the URL without password reaches the disk."""
    if url is not None and password is not None:
        from app.certs.vault import keep_secret

        keep_secret(KEYRING_SERVICE, url.keyring_entry, password, KEPT)
    settings = load_settings(data_dir)
    chosen = url.url if url is not None else None
    if settings.office_database != chosen:
        save_settings(data_dir, replace(settings, office_database=chosen))


def office_url(host: str, port: int, database: str, user: str, tls: str = "prefer") -> OfficeUrl:
    """The address typed in Configurações, checked field by field (Portuguese refusals)."""
    missing = [
        name for name, value in (("o servidor", host), ("o banco", database), ("o usuário", user)) if not value.strip()
    ]
    if missing:
        raise OfficeDatabaseError(f"Informe {', '.join(missing)} do banco do escritório.")
    if not 1 <= port <= 65535:
        raise OfficeDatabaseError("A porta vai de 1 a 65535 (a do PostgreSQL costuma ser 5432).")
    if tls not in TLS_LABELS:
        raise OfficeDatabaseError(f"Modo de TLS desconhecido: {tls}.")
    options = () if tls == "prefer" else (("sslmode", tls),)
    return OfficeUrl(host.strip(), port, database.strip(), user.strip(), None, options)


def has_password(url: OfficeUrl) -> bool:
    return kept_password(url) is not None


def chosen(data_dir: Path) -> OfficeUrl | None:
    """The office server this data folder uses, or None (its SQLite file)."""
    remembered = load_settings(data_dir).office_database
    return parse_office_url(remembered) if remembered else None


def target(data_dir: Path) -> str | None:
    """The URL ``Office`` opens, with the password from the keyring (in memory only), or None for
    the SQLite file. No password kept: the server's own rules decide (trust, pgpass, PGPASSWORD)."""
    url = chosen(data_dir)
    if url is None:
        return None
    return url.connect_url(kept_password(url))


def kept_password(url: OfficeUrl) -> str | None:
    """The password the keyring keeps for ``url``; None without one, or without a keyring here (a
    service account): the server may not want one, and says so if it does."""
    from app.certs.vault import VaultError, read_secret  # the keyring and its backends: when a server is chosen

    try:
        return read_secret(KEYRING_SERVICE, url.keyring_entry, KEPT)
    except VaultError:
        return None


def test_connection(url: OfficeUrl, password: str | None) -> str:
    """'Testar conexão': reach the server once; a sentence saying what this workstation will find
    there, or ``OfficeConnectionFailed`` saying what is wrong (password, server, database, TLS)."""
    if password is None:
        password = kept_password(url)
    found = probe(url.connect_url(password))
    where = f"Conectado a {url.display} (PostgreSQL {found.server_version})"
    if found.revision is None:
        return f"{where}. O banco está vazio: as tabelas são criadas na primeira abertura."
    if not found.known:
        install = f"a versão {found.app_version}" if found.app_version else "uma versão mais nova"
        raise OfficeConnectionFailed(
            f"{where}, mas o banco foi atualizado por uma versão mais nova do Captura DF-e: instale {install} "
            "nesta estação para usá-lo."
        )
    from app.store.db import head_revision  # SQLAlchemy loads on this worker, never with the window

    if found.revision != head_revision():
        return f"{where}. O banco é de uma versão anterior e será atualizado na próxima abertura."
    return f"{where}. O banco está pronto para uso."
