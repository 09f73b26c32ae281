"""The grid's name search read on an index alone: the grid's issue-date indexes again, with the
emitter's and the recipient's names (issue 24).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02

The name search (``LIKE '%…%'`` on both names) over a period read every row of it until a page of
matches: at ten million documents a supplier's name in the biggest company's month read its
200,000 rows, one table look-up each, scattered over the file (425 ms); over every company, the
190,000 rows before its 200th match (259 ms). With the names in an index of the grid's order the
search scans that index (three to four times faster at a million documents) and reads no row.
SQLite picks them only when the names are asked for: without a name, the narrower
``ix_documents_grid`` and ``ix_documents_product_grid`` cover the same statements.

Their price: about 90 bytes an entry each (1.8 GB more at ten million documents, 15% of the file)
and two more entries for every document the capture writes.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0017'
down_revision: Union[str, Sequence[str], None] = '0016'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

NAMES = ['emitter_name', 'recipient_name']


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(
            'ix_documents_grid_names', ['company_id', 'product', 'issued_at', 'id', *NAMES], unique=False
        )
        batch_op.create_index(
            'ix_documents_product_grid_names', ['product', 'issued_at', 'id', *NAMES], unique=False,
            sqlite_where=sa.text('issued_at IS NOT NULL'), postgresql_where=sa.text('issued_at IS NOT NULL'),
        )


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_product_grid_names')
        batch_op.drop_index('ix_documents_grid_names')
