"""The NF-e keys each CT-e carries, so a user goes from an NF-e to its CT-e and back.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

One row per (company, CT-e key, NF-e key), written with the CT-e's lot; looked up by either key.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0004'
down_revision: Union[str, Sequence[str], None] = '0003'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('cte_carried_nfe',
    sa.Column('company_id', sa.Integer(), nullable=False),
    sa.Column('cte_key', sa.String(length=50), nullable=False),
    sa.Column('nfe_key', sa.String(length=50), nullable=False),
    sa.ForeignKeyConstraint(['company_id'], ['companies.id'], name=op.f('fk_cte_carried_nfe_company_id_companies'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('company_id', 'cte_key', 'nfe_key', name=op.f('pk_cte_carried_nfe'))
    )
    op.create_index('ix_cte_carried_nfe_company_id_nfe_key', 'cte_carried_nfe', ['company_id', 'nfe_key'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_cte_carried_nfe_company_id_nfe_key', table_name='cte_carried_nfe')
    op.drop_table('cte_carried_nfe')
