"""The call lease: until when a service may be waiting for answers (replaces a write per call).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Before every distribution call that could end a company's queue, the engine used to commit a
wait for that company (a write-ahead: a lost answer must not be asked again within the hour).
Now one row per product says until when any answer may still come; it is extended a few minutes
at a time and deleted on a clean stop. A row found at start-up puts every company that could
have been asked before it into the hour's wait.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0003'
down_revision: Union[str, Sequence[str], None] = '0002'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('call_leases',
    sa.Column('product', sa.String(length=8), nullable=False),
    sa.Column('answers_by', sa.DateTime(), nullable=False),
    sa.CheckConstraint("product IN ('nfe', 'cte', 'nfse')", name=op.f('ck_call_leases_product')),
    sa.PrimaryKeyConstraint('product', name=op.f('pk_call_leases'))
    )


def downgrade() -> None:
    op.drop_table('call_leases')
