"""Export profiles and their queues; the ERP hand-off's targets and delivery log.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Each profile and each hand-off target keeps a watermark on ``distribution_items.id`` (every
captured document or event arrives with an NSU), so what arrived while the app was closed or the
destination unreachable is queued on the next run; a queue row goes only once its file is written.
The signing secret of a hand-off is in the keyring: the table has no column for it.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0007'
down_revision: Union[str, Sequence[str], None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('export_profiles',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('destination', sa.Text(), nullable=False),
    sa.Column('pattern', sa.Text(), nullable=False),
    sa.Column('products', sa.JSON(), nullable=False),
    sa.Column('kinds', sa.JSON(), nullable=False),
    sa.Column('directions', sa.JSON(), nullable=False),
    sa.Column('company_ids', sa.JSON(), nullable=False),
    sa.Column('only_authorised', sa.Boolean(), nullable=False),
    sa.Column('cancelled_mode', sa.String(length=8), nullable=False),
    sa.Column('include_pdf', sa.Boolean(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('watermark', sa.BigInteger(), nullable=False),
    sa.Column('exported_count', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('failing_since', sa.DateTime(), nullable=True),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=True),
    sa.Column('last_export_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.CheckConstraint("cancelled_mode IN ('move', 'beside')", name=op.f('ck_export_profiles_cancelled_mode')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_export_profiles')),
    sa.UniqueConstraint('name', name=op.f('uq_export_profiles_name'))
    )
    op.create_table('export_queue',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('item_type', sa.String(length=8), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.CheckConstraint("item_type IN ('document', 'event')", name=op.f('ck_export_queue_item_type')),
    sa.ForeignKeyConstraint(['profile_id'], ['export_profiles.id'], name=op.f('fk_export_queue_profile_id_export_profiles'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_export_queue')),
    sa.UniqueConstraint('profile_id', 'item_type', 'item_id', name=op.f('uq_export_queue_profile_id_item_type_item_id'))
    )
    op.create_table('handoff_deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('company_id', sa.Integer(), nullable=False),
    sa.Column('idempotency_key', sa.String(length=120), nullable=False),
    sa.Column('item_type', sa.String(length=8), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('access_key', sa.String(length=50), nullable=True),
    sa.Column('nsu', sa.BigInteger(), nullable=True),
    sa.Column('event_type', sa.String(length=40), nullable=False),
    sa.Column('action', sa.String(length=40), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
    sa.Column('last_http_status', sa.Integer(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('delivered_at', sa.DateTime(), nullable=True),
    sa.CheckConstraint("item_type IN ('document', 'event')", name=op.f('ck_handoff_deliveries_item_type')),
    sa.CheckConstraint("status IN ('pending', 'delivered')", name=op.f('ck_handoff_deliveries_status')),
    sa.ForeignKeyConstraint(['company_id'], ['companies.id'], name=op.f('fk_handoff_deliveries_company_id_companies'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_handoff_deliveries')),
    sa.UniqueConstraint('company_id', 'idempotency_key', name=op.f('uq_handoff_deliveries_company_id_idempotency_key'))
    )
    with op.batch_alter_table('handoff_deliveries', schema=None) as batch_op:
        batch_op.create_index('ix_handoff_deliveries_due', ['status', 'next_attempt_at'], unique=False)

    op.create_table('handoff_targets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('company_id', sa.Integer(), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('watermark', sa.BigInteger(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['company_id'], ['companies.id'], name=op.f('fk_handoff_targets_company_id_companies'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_handoff_targets')),
    sa.UniqueConstraint('company_id', name=op.f('uq_handoff_targets_company_id'))
    )


def downgrade() -> None:
    op.drop_table('handoff_targets')
    with op.batch_alter_table('handoff_deliveries', schema=None) as batch_op:
        batch_op.drop_index('ix_handoff_deliveries_due')

    op.drop_table('handoff_deliveries')
    op.drop_table('export_queue')
    op.drop_table('export_profiles')
