"""'Testar conexão': reach an office server once and say, in Portuguese, what is wrong or what the
database holds (empty, current, older: it will be migrated, newer: which version to install)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import exc as sa_exc

from app.core.errors import CapturaError

CONNECT_TIMEOUT_S = 8


class OfficeConnectionFailed(CapturaError):
    """The office server could not be used; the message says why in the clerk's words."""


def explain(error: BaseException, where: str = "") -> str:
    """What a psycopg connection error means for the person at the desk (``where``: user@host:port/db)."""
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


@dataclass(frozen=True, slots=True)
class ProbeResult:
    server_version: str  # "16.4"
    revision: str | None  # the schema's revision there; None: an empty database
    known: bool  # whether this app knows that revision
    app_version: str | None  # the app version that migrated it (schema_versions), when recorded


def probe(connect_url: str) -> ProbeResult:
    """Connect once (``postgresql+psycopg://…`` with the password), read the schema's revision."""
    import psycopg
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError
    from sqlalchemy import make_url

    from app.store.db import alembic_config

    target = make_url(connect_url)
    conninfo = target.set(drivername="postgresql").render_as_string(hide_password=False)
    where = f"{target.username}@{target.host}:{target.port or 5432}/{target.database}"
    try:
        with psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as connection:
            number = connection.info.server_version
            tables = {
                row[0] for row in connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            }
            revision = app_version = None
            if "alembic_version" in tables:
                found = connection.execute("SELECT version_num FROM alembic_version").fetchone()
                revision = found[0] if found else None
            if revision is not None and "schema_versions" in tables:
                row = connection.execute(
                    "SELECT app_version FROM schema_versions WHERE revision = %s", (revision,)
                ).fetchone()
                app_version = row[0] if row else None
    except psycopg.Error as error:
        raise OfficeConnectionFailed(f"Não foi possível conectar a {where}: {explain(error)}.") from None
    known = True
    if revision is not None:
        try:
            ScriptDirectory.from_config(alembic_config()).get_revision(revision)
        except CommandError:
            known = False
    return ProbeResult(f"{number // 10000}.{number % 10000}", revision, known, app_version)
