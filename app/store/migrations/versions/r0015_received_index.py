"""The IBS/CBS credit report's count: a covering partial index of the received, authorised
documents by issue date, company and product (issue 23).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02

The report counts, per company, product and month, the documents received, authorised, readable
and listed (``app.store.reform_lines.ReformLines.received_counts``). Without an index holding
those facts SQLite read the whole documents table for it: 1.2 GB at a million documents, whose
wall time was the disk's (64-176 s on a loaded machine for 4.6-4.9 CPU s of work). This index
holds only those documents and only the three columns the count groups by, so the count reads it
alone. The report's SQL repeats the WHERE text literally (SQLite uses a partial index only then).

Its price is one more index entry for every received document the capture writes (and its removal
when a document is cancelled); issue date first, so those inserts land near the index's end.
"""
from collections.abc import Sequence
from typing import Union

from alembic import op
import sqlalchemy as sa


revision: str = '0015'
down_revision: Union[str, Sequence[str], None] = '0014'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Repeated from app.store.models.documents.RECEIVED_AUTHORISED: a migration keeps its own text.
RECEIVED_AUTHORISED = "direction = 'received' AND status = 'authorised' AND quarantined = false AND withheld IS NULL"


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(
            'ix_documents_received_issued', ['issued_at', 'company_id', 'product'], unique=False,
            sqlite_where=sa.text(RECEIVED_AUTHORISED), postgresql_where=sa.text(RECEIVED_AUTHORISED),
        )


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_received_issued')
