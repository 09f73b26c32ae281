"""The grid sorted by value: an index on (product, total_cents, id); partial indexes for the
window's banner (cancelled, quarantined); on PostgreSQL, trigram indexes for the name search (issue 24).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02

At ten million documents a month of every company sorted by value took 1.1 s on SQLite: the
period's rows (about 1.7 million) read from the issue-date index, each row's value looked up, all
sorted for one page. This index gives the order itself: a page walks it from the largest value and
checks each row's period, a few thousand rows for a month (app.store.grid_order decides when; a
small period keeps its own index). Full, not partial: a grid with no period sorts by value too.

One more index for every document the capture writes (values arrive in no order: its inserts land
anywhere in it, as the key's unique index's do).

PostgreSQL: the name search (``ILIKE '%…%'`` on the emitter's and the recipient's name) read
every row of the period (a million documents: 1.5 s for a month of every company, where SQLite's
LIKE takes 150 ms). With pg_trgm's GIN indexes on both names it reads the rows that hold the
words (a bitmap of each index). pg_trgm ships with Debian's postgresql and is a trusted extension
(a database owner may create it); where it cannot be created the search keeps working, reading the
period as before. SQLite has no such index: its LIKE over the period's rows is fast enough there.
These indexes live only on PostgreSQL (``POSTGRESQL_ONLY_INDEXES`` in app.store.models.documents).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0014'
down_revision: Union[str, Sequence[str], None] = '0013'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


# The window's banner, counted at every opening and change of filter: the cancelled documents
# (covering for the check of their events) and the quarantined ones, a few percent of the rows or
# less, which SQLite found by reading the whole table (40 s and 32 s at a million documents on this
# loaded machine). The grid's SQL repeats these WHERE clauses literally: SQLite uses a partial
# index only for a query whose terms contain its WHERE.
BANNER_INDEXES = (
    ('ix_documents_cancelled', ['product', 'company_id', 'updated_at', 'access_key', 'created_at'],
     "status = 'cancelled'"),
    ('ix_documents_quarantined', ['product', 'company_id'], 'quarantined = true'),
)
TRIGRAM_INDEXES = (('ix_documents_emitter_name_trgm', 'emitter_name'), ('ix_documents_recipient_name_trgm', 'recipient_name'))


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index('ix_documents_product_value', ['product', 'total_cents', 'id'], unique=False)
        for name, columns, where in BANNER_INDEXES:
            batch_op.create_index(
                name, columns, unique=False, sqlite_where=sa.text(where), postgresql_where=sa.text(where)
            )
    bind = op.get_bind()
    if bind.dialect.name != 'postgresql':
        return
    available = bind.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first()
    if available is None:
        return
    try:
        with bind.begin_nested():  # a server that refuses the extension keeps the migration going
            bind.execute(sa.text('CREATE EXTENSION IF NOT EXISTS pg_trgm'))
    except sa.exc.DBAPIError:
        return
    for name, column in TRIGRAM_INDEXES:
        bind.execute(sa.text(f'CREATE INDEX {name} ON documents USING gin ({column} gin_trgm_ops)'))


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        for name, _column in TRIGRAM_INDEXES:
            op.execute(f'DROP INDEX IF EXISTS {name}')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        for name, _columns, _where in BANNER_INDEXES:
            batch_op.drop_index(name)
        batch_op.drop_index('ix_documents_product_value')
