"""'Testar conexão': reach an office server once and say, in Portuguese, what is wrong or what the
database holds (empty, current, older: it will be migrated, newer: which version to install)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.errors import CapturaError

CONNECT_TIMEOUT_S = 8


class OfficeConnectionFailed(CapturaError):
    """The office server could not be used; the message says why in the clerk's words."""


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
        from app.store.errors import explain  # with SQLAlchemy: loaded here, never with the window

        raise OfficeConnectionFailed(f"Não foi possível conectar a {where}: {explain(error)}.") from None
    known = True
    if revision is not None:
        try:
            ScriptDirectory.from_config(alembic_config()).get_revision(revision)
        except CommandError:
            known = False
    return ProbeResult(f"{number // 10000}.{number % 10000}", revision, known, app_version)
