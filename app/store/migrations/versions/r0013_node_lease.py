"""The capture node's lease: one workstation captures for the office, with a fencing token.

Revision ID: 0013
Revises: 0012 (pgwire's widening)
Create Date: 2026-12-02

One row, ``name`` 'capture', created here free (token 0): acquiring it is always a conditional
UPDATE (portable, atomic), never an INSERT race between two workstations.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0013'
down_revision: Union[str, Sequence[str], None] = '0012'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    table = op.create_table('node_lease',
    sa.Column('name', sa.String(length=20), nullable=False),
    sa.Column('token', sa.BigInteger(), nullable=False),
    sa.Column('node_id', sa.String(length=64), nullable=True),
    sa.Column('workstation', sa.Text(), nullable=True),
    sa.Column('pid', sa.Integer(), nullable=True),
    sa.Column('acquired_at', sa.DateTime(), nullable=True),
    sa.Column('renewed_at', sa.DateTime(), nullable=True),
    sa.Column('expires_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_node_lease'))
    )
    op.bulk_insert(table, [{'name': 'capture', 'token': 0}])


def downgrade() -> None:
    op.drop_table('node_lease')
