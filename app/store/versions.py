"""The schema and the app versions that share one office database.

``schema_versions`` (revision 0012) records which version of the app brought the schema to each
revision: a workstation whose app is older than the schema refuses the database and names the
version to install (:func:`too_new`). ``MIGRATION_GUARDS`` run before a database moves to a newer
schema, inside the migration's transaction (on the office server under the writer lock, so one
workstation migrates at a time) with (connection, current revision, head, now), and refuse by
raising ``StorageUnavailable``; app.store.lease adds its own when imported (every desk imports it):
no move while a capture node with the older app holds the office.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, delete, insert, select
from sqlalchemy.exc import DBAPIError

from app.store.errors import SchemaTooNew
from app.store.models import SchemaVersionRow

Guard = Callable[[Connection, str | None, str, datetime], None]
MIGRATION_GUARDS: list[Guard] = []


def too_new(connection: Connection, current: str, location: Path | str) -> SchemaTooNew:
    """The refusal of an app older than the database's schema, naming the version to install."""
    try:
        with connection.begin_nested():
            found = select(SchemaVersionRow.app_version).where(SchemaVersionRow.revision == current)
            version = connection.execute(found).scalar()
    except DBAPIError:  # no schema_versions table: a schema from before revision 0012
        version = None
    install = f"Instale a versão {version} do Captura DF-e (ou mais nova)" if version else "Atualize o Captura DF-e"
    return SchemaTooNew(
        f"O banco de dados {location} foi atualizado por uma versão mais nova do Captura DF-e "
        f"(revisão {current}). {install} nesta estação para usá-lo; nada foi gravado nele.",
        version,
    )


def guard_migration(connection: Connection, current: str | None, head: str, now: datetime) -> None:
    """Every guard's say before ``current`` moves to ``head`` (a new database has nobody to ask)."""
    if current is not None:
        for guard in MIGRATION_GUARDS:
            guard(connection, current, head, now)


def record_version(connection: Connection, head: str, app_version: str, now: datetime) -> None:
    """After the migration: ``app_version`` brought the schema to ``head``."""
    connection.execute(delete(SchemaVersionRow).where(SchemaVersionRow.revision == head))
    connection.execute(insert(SchemaVersionRow).values(revision=head, app_version=app_version, migrated_at=now))
