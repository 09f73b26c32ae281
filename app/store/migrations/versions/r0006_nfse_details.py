"""NFS-e Nacional: service, values and taxes per NFS-e, delivery rules, substitution keys.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

- ``nfse_details``: one row per NFS-e document (cTribNac, cTribMun, NBS, description, municipality
  of incidence, vServ, vLiq, ISSQN, retentions, the IBS/CBS totals, the replaced key), written
  with the document's lot by the NFS-e adapter only: the NF-e and CT-e hot path writes nothing new.
- ``documents.withheld``: why a stored NFS-e is not listed, notified or exported yet ("cutoff":
  issued before the company's cutoff date; "own_issued": own NFS-e while that capture is off).
- ``capture_settings.nfse_history_released``: ``company set --product nfse --release-history``.
- ``events.substitute_key``: chSubstituta of a cancellation by substitution (105102).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa



revision: str = '0006'
down_revision: Union[str, Sequence[str], None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('nfse_details',
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('competence', sa.Date(), nullable=True),
    sa.Column('processed_at', sa.DateTime(), nullable=True),
    sa.Column('national_code', sa.String(length=6), nullable=True),
    sa.Column('municipal_code', sa.String(length=20), nullable=True),
    sa.Column('nbs', sa.String(length=9), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('incidence_code', sa.String(length=7), nullable=True),
    sa.Column('incidence_name', sa.String(length=150), nullable=True),
    sa.Column('service_cents', sa.BigInteger(), nullable=True),
    sa.Column('net_cents', sa.BigInteger(), nullable=True),
    sa.Column('iss_rate', sa.String(length=8), nullable=True),
    sa.Column('iss_cents', sa.BigInteger(), nullable=True),
    sa.Column('retained_cents', sa.BigInteger(), nullable=True),
    sa.Column('iss_retention', sa.String(length=1), nullable=True),
    sa.Column('intermediary_id', sa.String(length=14), nullable=True),
    sa.Column('ibscbs_base_cents', sa.BigInteger(), nullable=True),
    sa.Column('ibscbs_total_cents', sa.BigInteger(), nullable=True),
    sa.Column('ibs_cents', sa.BigInteger(), nullable=True),
    sa.Column('cbs_cents', sa.BigInteger(), nullable=True),
    sa.Column('replaced_key', sa.String(length=50), nullable=True),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_nfse_details_document_id_documents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('document_id', name=op.f('pk_nfse_details'))
    )
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('withheld', sa.String(length=12), nullable=True))
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.add_column(sa.Column('substitute_key', sa.String(length=50), nullable=True))
    with op.batch_alter_table('capture_settings', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('nfse_history_released', sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('capture_settings', schema=None) as batch_op:
        batch_op.drop_column('nfse_history_released')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_column('substitute_key')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_column('withheld')
    op.drop_table('nfse_details')
