"""The grid of every company: an index on (product, issued_at, id) for documents with an issue date.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

The window opens on every company's NF-e issued since the first day of last month, newest first.
``ix_documents_grid`` leads with company_id, so for every company SQLite either scanned all of it
and sorted the period in a temporary b-tree (first page 160-250 ms at a million documents), or,
with a name filter or another order, walked the table in ix_documents_nsu's order (text filter
1.7-1.8 s, sort by value 1.5-1.6 s). With this index: 50 ms, 130-270 ms and 120-210 ms
(tests/benchmarks/bench_grid.py, 1,000,000 documents, 200 companies, shared 2-core machine).

Partial (``issued_at IS NOT NULL``): a query with a period implies it, so the grid uses it; a key
look-up without a period (``Desk.find_key``) cannot, and keeps the unique (company, product, key)
index. A full index made SQLite walk it in date order to honour ORDER BY ... LIMIT and test every
row for the key (3 ms -> 500-700 ms). A key typed with the window's period still gets the range
on this index (4 -> ~125 ms, its count 1 -> ~290 ms): the grid's SQL has to keep index ranges off
issue dates when it has a key (``+issued_at``), which no index can do. The window always sets a
period; documents without an issue date (unreadable) are not in this index.

One more index for every document the capture writes; issue dates grow with capture time, so its
inserts land near the right edge (bench_nfe_processing: no difference beyond the run-to-run noise).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0005'
down_revision: Union[str, Sequence[str], None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(
            'ix_documents_product_grid',
            ['product', 'issued_at', 'id'],
            unique=False,
            sqlite_where=sa.text('issued_at IS NOT NULL'),
            postgresql_where=sa.text('issued_at IS NOT NULL'),
        )


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_product_grid')
