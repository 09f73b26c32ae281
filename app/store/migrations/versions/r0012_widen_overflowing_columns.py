"""Columns too short for what they hold, widened (PostgreSQL enforces a VARCHAR's length, SQLite
not); ``schema_versions``: which app version brought the schema to each revision.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

Found by running the capture on PostgreSQL (issue 24); SQLite had been storing the longer values:
- ``government_calls.operation`` 20 → 100: it holds event ids (``ID210210`` + key + seq, 54),
  ``consChNFe:<key>`` (54), ``nfse:<key>`` (55) and the NFS-e ``PRE…`` ids (62).
- ``documents.situation`` 40 → 255: a CT-e's is its protocol's xMotivo (TMotivo, up to 255).
- ``documents.emitter_name``/``recipient_name`` and ``document_parties.name`` 200 → 300: an NFS-e's
  xNome goes up to 300 characters (NF-e and CT-e 60).

PostgreSQL widens a VARCHAR in place (no table rewrite). SQLite ignores the length: only the
declared type in the schema text changes, through the procedure SQLite documents for changes that
leave the stored content as it is (``writable_schema``, then a new ``schema_version``), so a
million-document file is not copied table by table, and no ``DROP TABLE`` cascades into its
children as a batch copy would with foreign keys on.

``schema_versions`` (revision, app_version, migrated_at) is written by app.store.db after every
upgrade: an older workstation meeting a revision it does not know names the version to install.
"""

import re
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = "0012"
down_revision: Union[str, Sequence[str], None] = "0011"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# (table, column, length before, length after)
WIDENED = (
    ("government_calls", "operation", 20, 100),
    ("documents", "situation", 40, 255),
    ("documents", "emitter_name", 200, 300),
    ("documents", "recipient_name", 200, 300),
    ("document_parties", "name", 200, 300),
)


def _sqlite_declared_lengths(changes: Sequence[tuple[str, str, int, int]]) -> None:
    """Rewrite ``<column> VARCHAR(<old>)`` as ``VARCHAR(<new>)`` in each table's CREATE TABLE."""
    bind = op.get_bind()
    texts: dict[str, str] = {
        table: bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).scalar_one()
        for table in {change[0] for change in changes}
    }
    for table, column, old, new in changes:
        pattern = re.compile(rf'(\b"?{column}"?\s+)VARCHAR\({old}\)', re.IGNORECASE)
        texts[table], found = pattern.subn(rf"\g<1>VARCHAR({new})", texts[table])
        if found != 1:
            raise RuntimeError(f"{table}.{column} VARCHAR({old}) not found once in the schema ({found})")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        for table, sql in texts.items():
            bind.exec_driver_sql("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (sql, table))
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")  # other connections reload it
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")


def _change(changes: Sequence[tuple[str, str, int, int]]) -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_declared_lengths(changes)
        return
    for table, column, old, new in changes:
        op.alter_column(table, column, existing_type=sa.String(length=old), type_=sa.String(length=new))


def upgrade() -> None:
    _change(WIDENED)
    op.create_table('schema_versions',
    sa.Column('revision', sa.String(length=32), nullable=False),
    sa.Column('app_version', sa.String(length=40), nullable=False),
    sa.Column('migrated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('revision', name=op.f('pk_schema_versions'))
    )


def downgrade() -> None:
    op.drop_table('schema_versions')
    # Narrowing fails on PostgreSQL where a longer value is stored: nothing is cut silently.
    _change([(table, column, new, old) for table, column, old, new in WIDENED])
