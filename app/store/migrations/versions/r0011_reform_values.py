"""The consumption-tax reform: IBS/CBS/IS per document and per NF-e item, NF-e references.

Revision ID: 0011
Revises: 0010 (0009 is deskpolish's, not on main yet: the lead re-chains)
Create Date: 2026-12-02

- ``document_reform``: one row per document carrying the reform's groups (NF-e IBSCBSTot/ISTot,
  CT-e and NFS-e IBSCBS), or per nota de crédito/débito (finNFe 5, 6) without them; values in
  centavos, NULL when not informed; ``unreadable`` when a value could not be read.
- ``document_reform_items``: per NF-e item its CST, cClassTrib, IBS, CBS and IS.
- ``nfe_references``: the NF-e keys an NF-e references (NFref/refNFe), looked up by either key.
Written with the document's lot; documents without the groups write nothing here.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0011'
down_revision: Union[str, Sequence[str], None] = '0010'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_VALUES = (
    'base_cents', 'ibs_uf_cents', 'ibs_mun_cents', 'ibs_cents', 'cbs_cents', 'ibs_presumed_cents',
    'ibs_presumed_suspended_cents', 'cbs_presumed_cents', 'cbs_presumed_suspended_cents', 'is_cents', 'total_cents',
)
_ITEM_VALUES = ('base_cents', 'ibs_uf_cents', 'ibs_mun_cents', 'ibs_cents', 'cbs_cents', 'is_cents')


def upgrade() -> None:
    op.create_table('document_reform',
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('has_groups', sa.Boolean(), nullable=False),
    sa.Column('unreadable', sa.Boolean(), nullable=False),
    sa.Column('purpose', sa.String(length=1), nullable=True),
    *[sa.Column(name, sa.BigInteger(), nullable=True) for name in _VALUES],
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_document_reform_document_id_documents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('document_id', name=op.f('pk_document_reform'))
    )
    op.create_table('document_reform_items',
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('item_number', sa.Integer(), nullable=False),
    sa.Column('cst', sa.String(length=3), nullable=True),
    sa.Column('class_code', sa.String(length=6), nullable=True),
    *[sa.Column(name, sa.BigInteger(), nullable=True) for name in _ITEM_VALUES],
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_document_reform_items_document_id_documents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('document_id', 'item_number', name=op.f('pk_document_reform_items'))
    )
    op.create_table('nfe_references',
    sa.Column('company_id', sa.Integer(), nullable=False),
    sa.Column('nfe_key', sa.String(length=50), nullable=False),
    sa.Column('referenced_key', sa.String(length=50), nullable=False),
    sa.ForeignKeyConstraint(['company_id'], ['companies.id'], name=op.f('fk_nfe_references_company_id_companies'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('company_id', 'nfe_key', 'referenced_key', name=op.f('pk_nfe_references'))
    )
    op.create_index('ix_nfe_references_company_id_referenced_key', 'nfe_references', ['company_id', 'referenced_key'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_nfe_references_company_id_referenced_key', table_name='nfe_references')
    op.drop_table('nfe_references')
    op.drop_table('document_reform_items')
    op.drop_table('document_reform')
