"""PostgreSQL's name search through a dictionary of the names: the distinct emitter and recipient
names kept by triggers, searched first, the documents then read by name (issue 24).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03

At ten million documents the grid's name search (``ILIKE '%…%'`` on both names) took 347 ms on
PostgreSQL for a month of every company (goal 200): pg_trgm's GIN indexes on the documents
(revision 0014) read every row holding each trigram of the words, and an office's suppliers share
their words (``COMERCIO``, ``LTDA``, a family name), so the rarest trigram of a supplier's name was
in ~160,000 rows. An office's documents carry a few thousand distinct names, so ``ILIKE`` runs on
those names (``document_names``, with its own trigram index), and the documents are then found by
the names matched, in (product, name, issue date) indexes: 12 ms for the same search.

The dictionary is the database's to keep: a statement trigger adds the names of the documents each
INSERT wrote (the capture, ``database migrate --to``) and a row trigger those of an UPDATE that
changes a name; a name whose documents were all deleted stays (a search finds no document by it).
PostgreSQL only, like the trigram indexes it replaces: SQLite reads the names beside the grid's
order (revision 0017), and its LIKE over them is fast enough there; its capture pays nothing.

The price on PostgreSQL: two B-tree entries for every document (the two GIN indexes' entries are
gone), a dictionary probe per name written.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0018'
down_revision: Union[str, Sequence[str], None] = '0017'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Repeated in app.store.models.documents (the drift check leaves them out): a migration keeps its own text.
NAME_INDEXES = (
    ('ix_documents_emitter_name_grid', 'emitter_name'),
    ('ix_documents_recipient_name_grid', 'recipient_name'),
)
TRIGRAM_INDEXES = (('ix_documents_emitter_name_trgm', 'emitter_name'), ('ix_documents_recipient_name_trgm', 'recipient_name'))
NAMES_OF = (
    "SELECT DISTINCT name FROM (SELECT emitter_name AS name FROM {rows} UNION ALL "
    "SELECT recipient_name FROM {rows}) AS written WHERE name IS NOT NULL"
)
UPGRADE = (
    'CREATE TABLE document_names (name text PRIMARY KEY)',
    f"INSERT INTO document_names (name) {NAMES_OF.format(rows='documents')}",
    f"""CREATE FUNCTION document_names_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO document_names (name) {NAMES_OF.format(rows='inserted')} ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$""",
    """CREATE FUNCTION document_names_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO document_names (name)
    SELECT name FROM (VALUES (NEW.emitter_name), (NEW.recipient_name)) AS renamed (name)
    WHERE name IS NOT NULL ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$""",
    'CREATE TRIGGER documents_names_inserted AFTER INSERT ON documents REFERENCING NEW TABLE AS inserted '
    'FOR EACH STATEMENT EXECUTE FUNCTION document_names_inserted()',
    'CREATE TRIGGER documents_names_renamed AFTER UPDATE OF emitter_name, recipient_name ON documents '
    'FOR EACH ROW WHEN (NEW.emitter_name IS DISTINCT FROM OLD.emitter_name '
    'OR NEW.recipient_name IS DISTINCT FROM OLD.recipient_name) EXECUTE FUNCTION document_names_renamed()',
)


def _trigram_available() -> bool:
    bind = op.get_bind()
    return bind.execute(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).first() is not None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    for statement in UPGRADE:
        op.execute(statement)
    if _trigram_available():  # revision 0014 created it where the server allows
        op.execute('CREATE INDEX ix_document_names_trgm ON document_names USING gin (name gin_trgm_ops)')
    for name, column in NAME_INDEXES:
        op.execute(f'CREATE INDEX {name} ON documents (product, {column}, issued_at, id)')
    for name, _column in TRIGRAM_INDEXES:
        op.execute(f'DROP INDEX IF EXISTS {name}')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    if _trigram_available():
        for name, column in TRIGRAM_INDEXES:
            op.execute(f'CREATE INDEX {name} ON documents USING gin ({column} gin_trgm_ops)')
    for name, _column in NAME_INDEXES:
        op.execute(f'DROP INDEX {name}')
    op.execute('DROP TRIGGER documents_names_renamed ON documents')
    op.execute('DROP TRIGGER documents_names_inserted ON documents')
    op.execute('DROP FUNCTION document_names_renamed()')
    op.execute('DROP FUNCTION document_names_inserted()')
    op.execute('DROP TABLE document_names')
