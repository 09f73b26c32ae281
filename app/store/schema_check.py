"""Is the office database's schema still this app's, after an outage?

A workstation cut off from the server (its capture node's lease perhaps expired meanwhile) may
come back to a schema another workstation, with a newer app, migrated in between (no node held
the office then: app.store.lease.no_live_node let it). Before it writes again, the capture node
asks :func:`newer_schema`; a refusal names the version to install (app.store.versions.too_new).
"""

from __future__ import annotations

from app.store.db import Database, head_revision
from app.store.errors import SchemaTooNew, translate_errors
from app.store.versions import too_new


def newer_schema(db: Database) -> SchemaTooNew | None:
    """The refusal when the database's schema is no longer this app's head (the one it opened
    the database at), else None."""
    with translate_errors(db.location), db.engine.connect() as connection:
        stored = [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]
        if stored == [head_revision()]:
            return None
        return too_new(connection, stored[0] if stored else "?", db.location)
