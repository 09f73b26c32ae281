"""The grid sorted by value, largest first, walked on an index alone: every company's and each
company's, holding the issue and capture instants (issue 24).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02

Revision 0014's (product, total_cents, id) gives the order of a large period sorted by value, but
each entry walked has its row read to check the period: at ten million documents the captured
month of every company (one row in six) took 365 ms, those reads scattered over the whole table.
With the period's instants in the index the walk reads the index only. A company's grid sorted by
value read its period from (company, product, issue date) and sorted it (the biggest company's
month, 200,000 rows: 790 ms); (company, product, total_cents, id, issued_at, created_at) walks its
own order instead (app.store.grid_order decides when, as for every company). The id before the
instants: the grid's order is (value, id), which the index then gives whole.

Both partial (``total_cents IS NOT NULL``): only a query that states it uses them. Full, without
statistics SQLite read a company's whole index for the banner's counts (2.3 s at a million
documents, where their partial indexes take a millisecond) and every company's for the cancelled
ones. The grid's walk states it and reads the valued documents, which are the first page when the
largest come first (a missing value sorts last descending); smallest first keeps 0014's index.

Two more index entries for every document the capture writes, about 60 bytes each.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0016'
down_revision: Union[str, Sequence[str], None] = '0015'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

VALUED = 'total_cents IS NOT NULL'
VALUE_INDEXES = (
    ('ix_documents_product_valued', ['product']), ('ix_documents_company_valued', ['company_id', 'product']),
)


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        for name, lead in VALUE_INDEXES:
            batch_op.create_index(
                name, [*lead, 'total_cents', 'id', 'issued_at', 'created_at'], unique=False,
                sqlite_where=sa.text(VALUED), postgresql_where=sa.text(VALUED),
            )


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        for name, _lead in VALUE_INDEXES:
            batch_op.drop_index(name)
