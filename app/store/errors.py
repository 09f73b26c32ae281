"""The store's error tree: the environment's fault versus the program's bug.

Following qutebrowser's ``misc/sql.py``: a full disk, a locked or unreadable file is something
the user can act on, so it becomes ``StorageUnavailable`` with a Portuguese sentence; any other
database error means our SQL or schema is wrong and becomes ``StorageBug``, which the UI shows
as an internal error and the log keeps with its traceback.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import exc as sa_exc

from app.core.errors import CapturaError

# Primary SQLite result codes (https://www.sqlite.org/rescode.html) that describe the machine,
# not the program: the extended codes carry the primary one in their low byte.
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_NOMEM = 7
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_PROTOCOL = 15
SQLITE_NOTADB = 26

_ENVIRONMENT_MESSAGES: dict[int, str] = {
    SQLITE_PERM: "sem permissão para acessar o arquivo",
    SQLITE_BUSY: "o banco está ocupado por outro processo; tente de novo em instantes",
    SQLITE_LOCKED: "o banco está bloqueado por outra operação; tente de novo em instantes",
    SQLITE_NOMEM: "memória insuficiente",
    SQLITE_READONLY: "o arquivo está somente leitura",
    SQLITE_IOERR: "erro de leitura ou gravação no disco",
    SQLITE_CORRUPT: "o arquivo do banco está corrompido",
    SQLITE_FULL: "o disco está cheio",
    SQLITE_CANTOPEN: "não foi possível abrir o arquivo",
    SQLITE_PROTOCOL: "conflito de acesso ao arquivo; tente de novo em instantes",
    SQLITE_NOTADB: "o arquivo não é um banco de dados do Captura DF-e",
}


class StorageUnavailable(CapturaError):
    """The database cannot be used now because of the machine: disk full, file locked,
    unreadable, read-only or corrupt. ``message`` says so in Portuguese; ``sqlite_code`` keeps
    the primary SQLite result code when there is one."""

    def __init__(self, message: str, sqlite_code: int | None = None) -> None:
        super().__init__(message)
        self.sqlite_code = sqlite_code


class SchemaTooNew(StorageUnavailable):
    """The database's schema is newer than this app knows: it refuses to write there, and names
    the ``app_version`` to install when the database recorded it (``schema_versions``)."""

    def __init__(self, message: str, app_version: str | None = None) -> None:
        super().__init__(message)
        self.app_version = app_version


class StorageCorrupt(StorageUnavailable):
    """Stored bytes do not match their recorded sha256 (or do not decompress)."""


class StorageBug(RuntimeError):
    """A database error that points at the program (bad SQL, schema drift, broken invariant)."""


class InvalidRecord(CapturaError, ValueError):
    """A value handed to a repository breaks a rule of the schema (e.g. a wait under 5 minutes)."""


def sqlite_code_of(error: BaseException) -> int | None:
    """The primary SQLite result code behind ``error`` (SQLAlchemy-wrapped or raw), if any."""
    original = error.orig if isinstance(error, sa_exc.DBAPIError) else error
    code = getattr(original, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    # Some errors are raised without a code (e.g. "file is not a database" on older builds).
    text = str(original).lower()
    if "database is locked" in text:
        return SQLITE_BUSY
    if "disk is full" in text or "database or disk is full" in text:
        return SQLITE_FULL
    if "file is not a database" in text:
        return SQLITE_NOTADB
    if "unable to open database file" in text:
        return SQLITE_CANTOPEN
    return None


def unavailable(path: Path | str | None, code: int | None, detail: str = "") -> StorageUnavailable:
    reason = _ENVIRONMENT_MESSAGES.get(code or -1, detail or "erro de acesso ao banco de dados")
    where = f" ({path})" if path is not None else ""
    return StorageUnavailable(f"Banco de dados indisponível{where}: {reason}.", code)


def _psycopg_errors() -> tuple[type[Exception], ...]:
    """psycopg's base error, once something imported it (an office database): SQLite-only
    desktops never load the driver for the sake of an ``except`` clause."""
    psycopg = sys.modules.get("psycopg")
    return (psycopg.Error,) if psycopg is not None else ()


def server_unreachable(error: BaseException) -> bool:
    """A PostgreSQL error of the environment: the server down or restarting, the network gone,
    authentication refused, the server's disk full (psycopg's ``OperationalError`` family)."""
    psycopg = sys.modules.get("psycopg")
    original = error.orig if isinstance(error, sa_exc.DBAPIError) else error
    return psycopg is not None and isinstance(original, psycopg.OperationalError)


def explain(error: BaseException) -> str:
    """What a psycopg connection error means for the person at the desk, in Portuguese."""
    original: Any = error.orig if isinstance(error, sa_exc.DBAPIError) else error
    state = getattr(original, "sqlstate", None)
    text = str(original).lower()
    first = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
    if state == "28P01" or "password authentication failed" in text:
        return "o servidor recusou a senha: confira a senha do usuário (maiúsculas e minúsculas contam)"
    if "no password supplied" in text or "fe_sendauth" in text:
        return "o servidor pede uma senha e nenhuma foi informada"
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return "o banco informado não existe nesse servidor: crie-o (CREATE DATABASE) ou corrija o nome"
    if "role" in text and "does not exist" in text:
        return "o usuário informado não existe nesse servidor"
    if "server does not support ssl" in text:
        return "a conexão pede TLS (criptografia) e o servidor não oferece: ative ssl no servidor ou use 'Se oferecer'"
    if "no pg_hba.conf entry" in text:
        tls = " sem criptografia: o servidor exige TLS" if "no encryption" in text else ""
        return f"o servidor não aceita conexões desta estação com esse usuário e banco{tls} (pg_hba.conf)"
    if "certificate" in text or "ssl" in text or "tls" in text:
        return f"a conexão TLS falhou ({first})"
    if "connection refused" in text:
        return "nenhum PostgreSQL respondeu nesse servidor e porta (desligado, porta errada ou firewall)"
    if "translate host name" in text or "name or service not known" in text or "nodename nor servname" in text:
        return "o nome do servidor não foi encontrado na rede: confira o nome ou use o endereço IP"
    if "timeout" in text or "timed out" in text:
        return "o servidor não respondeu a tempo (rede, VPN ou firewall)"
    if state == "42501" or "permission denied" in text:
        return "o usuário não tem permissão nesse banco: o dono do banco deve ser ele (ALTER DATABASE … OWNER TO …)"
    return first


def office_unavailable(error: BaseException) -> StorageUnavailable:
    return StorageUnavailable(f"Sem conexão com o banco do escritório: {explain(error)}.")


def is_environmental(error: BaseException) -> bool:
    return sqlite_code_of(error) in _ENVIRONMENT_MESSAGES or server_unreachable(error)


@contextmanager
def translate_errors(path: Path | str | None = None) -> Iterator[None]:
    """Re-raise database errors as ``StorageUnavailable`` (environment) or ``StorageBug`` (program).

    Errors of our own tree pass through untouched.
    """
    try:
        yield
    except (CapturaError, StorageBug):
        raise
    except (sa_exc.DBAPIError, sqlite3.Error, *_psycopg_errors()) as error:  # type: ignore[misc]
        if server_unreachable(error):
            raise office_unavailable(error) from error
        code = sqlite_code_of(error)
        if code in _ENVIRONMENT_MESSAGES:
            raise unavailable(path, code) from error
        raise StorageBug(f"database error: {error}") from error
    except OSError as error:
        raise StorageUnavailable(f"Banco de dados indisponível ({path}): {error.strerror or error}.", None) from error
