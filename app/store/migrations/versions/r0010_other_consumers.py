"""Sightings of another system consuming a company's distribution with the same certificate.

Revision ID: 0010
Revises: 0008
Create Date: 2026-12-02

Issue 22: the Ambiente Nacional keeps one NSU sequence per CNPJ; what another system takes by
distNSU never comes back by distNSU. Each row is one answer that showed it (a 656 on a distNSU our
cadence allowed, a lot starting past our cursor): when, and the NSU range ``(from_nsu, to_nsu]``
taken, whose NSUs are gap recoveries (``gap_recoveries``, joined on the range for the tally).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0010'
down_revision: Union[str, Sequence[str], None] = '0008'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('other_consumers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('company_id', sa.Integer(), nullable=False),
    sa.Column('product', sa.String(length=8), nullable=False),
    sa.Column('seen_at', sa.DateTime(), nullable=False),
    sa.Column('cstat', sa.String(length=10), nullable=False),
    sa.Column('from_nsu', sa.BigInteger(), nullable=False),
    sa.Column('to_nsu', sa.BigInteger(), nullable=False),
    sa.Column('skipped', sa.Integer(), nullable=False),
    sa.Column('queued', sa.Integer(), nullable=False),
    sa.Column('out_of_reach', sa.Integer(), nullable=False),
    sa.CheckConstraint("product IN ('nfe', 'cte', 'nfse')", name=op.f('ck_other_consumers_product')),
    sa.CheckConstraint('to_nsu >= from_nsu', name=op.f('ck_other_consumers_range')),
    sa.ForeignKeyConstraint(['company_id'], ['companies.id'], name=op.f('fk_other_consumers_company_id_companies'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_other_consumers'))
    )
    op.create_index('ix_other_consumers_company_id_product', 'other_consumers', ['company_id', 'product'], unique=False)
    op.create_index('ix_other_consumers_product_seen_at', 'other_consumers', ['product', 'seen_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_other_consumers_product_seen_at', table_name='other_consumers')
    op.drop_index('ix_other_consumers_company_id_product', table_name='other_consumers')
    op.drop_table('other_consumers')
