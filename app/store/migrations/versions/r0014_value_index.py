"""The grid sorted by value: an index on (product, total_cents, id) (issue 24).

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
"""
from collections.abc import Sequence
from typing import Union

from alembic import op


revision: str = '0014'
down_revision: Union[str, Sequence[str], None] = '0013'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index('ix_documents_product_value', ['product', 'total_cents', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_product_value')
