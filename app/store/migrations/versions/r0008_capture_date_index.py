"""The grid by capture date: an index on (product, created_at, issued_at, id).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

The window's default view is "capturados nos últimos 30 dias" (every arrival is seen whatever its
issue date: 30 NF-e captured today and issued in 2022-2024 are listed). Without this index the
capture period of every company is a walk of the whole product; with it, a range of the days
asked for, counted and paged in SQL.

Covering for the default order (the period's ids sorted by issue date without reading a row).
Partial (``created_at IS NOT NULL``, which every row is): only a query that says so (the grid's
SQL does, with a capture period: SQLite does not infer it from a range on a NOT NULL column) uses
it, so a grid with no period keeps its issue-date indexes. A full index here made SQLite
read a period-less grid (the command line's ``documents list``) through it and sort the whole
product in a temporary b-tree (200,000 documents: first page 0.96 s; tests/benchmarks/bench_grid.py).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0008'
down_revision: Union[str, Sequence[str], None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(
            'ix_documents_product_captured',
            ['product', 'created_at', 'issued_at', 'id'],
            unique=False,
            sqlite_where=sa.text('created_at IS NOT NULL'),
            postgresql_where=sa.text('created_at IS NOT NULL'),
        )


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_product_captured')
