"""Drop the indexes on access_key alone (documents, events).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Every look-up by key names the company and product, so the unique indexes (company_id, product,
access_key, ...) serve it. The single-column indexes were never chosen for those queries and,
keys being random, each lot's inserts touched a separate leaf of them: dropping them halves the
pages a 50-document lot writes to the WAL (commit 30 -> 15 us per document, measured with
tests/benchmarks/bench_nfe_processing.py's stream).
"""
from collections.abc import Sequence
from typing import Union

from alembic import op


revision: str = '0002'
down_revision: Union[str, Sequence[str], None] = '0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_access_key')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_access_key')


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index('ix_documents_access_key', ['access_key'], unique=False)
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_access_key', ['access_key'], unique=False)
