"""What the capture did and owes: archived exchanges, gap recoveries, manifestations, point
queries, runs and every government call.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import (
    CSTAT_LEN,
    KEY_LEN,
    NULLABLE_PRODUCT_CHECK,
    PRODUCTS_CHECK,
    Base,
    company_fk,
)


class ArchivedExchangeRow(Base):
    """A government request and response kept for audit; pruned after the retention period."""

    __tablename__ = "archived_exchanges"
    __table_args__ = (
        Index("ix_archived_exchanges_created_at", "created_at"),
        Index("ix_archived_exchanges_call_id", "call_id"),  # pruning calls sets these to NULL
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    call_id: Mapped[int | None] = mapped_column(ForeignKey("government_calls.id", ondelete="SET NULL"))
    company_id: Mapped[int | None] = mapped_column(company_fk("SET NULL"))
    service: Mapped[str] = mapped_column(String(40))
    request_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    response_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]


class GapRecoveryRow(Base):
    __tablename__ = "gap_recoveries"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "nsu"),
        UniqueConstraint("company_id", "product", "access_key"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("nsu IS NOT NULL OR access_key IS NOT NULL", name="nsu_or_key"),
        CheckConstraint("status IN ('pending', 'recovered', 'not_found', 'abandoned')", name="status"),
        Index("ix_gap_recoveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    nsu: Mapped[int | None] = mapped_column(BigInteger)
    access_key: Mapped[str | None] = mapped_column(String(KEY_LEN))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(12))
    last_error: Mapped[str | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ManifestationRow(Base):
    __tablename__ = "manifestations"
    __table_args__ = (
        # One request per key, event type and sequence: the guard against sending twice.
        UniqueConstraint("company_id", "product", "access_key", "tp_evento", "n_seq_evento"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("status IN ('pending', 'sent', 'accepted', 'rejected')", name="status"),
        Index("ix_manifestations_due", "status", "not_before"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    access_key: Mapped[str] = mapped_column(String(KEY_LEN))
    tp_evento: Mapped[str] = mapped_column(String(6))
    n_seq_evento: Mapped[int] = mapped_column(Integer)
    justification: Mapped[str | None]
    automatic: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(10))
    not_before: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(Integer)
    cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))
    x_motivo: Mapped[str | None]
    protocol: Mapped[str | None] = mapped_column(String(20))
    result_xml_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]


class PointQueryRow(Base):
    """The consNSU/consChNFe quota ledger: 20 queries that return a document per hour per CNPJ."""

    __tablename__ = "point_queries"
    __table_args__ = (
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        Index("ix_point_queries_window", "cnpj", "product", "queried_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cnpj: Mapped[str] = mapped_column(String(14))
    product: Mapped[str] = mapped_column(String(8))
    nsu: Mapped[int | None] = mapped_column(BigInteger)
    access_key: Mapped[str | None] = mapped_column(String(KEY_LEN))
    queried_at: Mapped[datetime]
    returned_document: Mapped[bool] = mapped_column(Boolean)


class RunRow(Base):
    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(NULLABLE_PRODUCT_CHECK, name="product"),
        Index("ix_runs_started_at", "started_at"),
        Index("ix_runs_status", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_type: Mapped[str] = mapped_column(String(40))
    company_id: Mapped[int | None] = mapped_column(company_fk("SET NULL"))
    product: Mapped[str | None] = mapped_column(String(8))
    trigger: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(12))
    reason: Mapped[str | None]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class GovernmentCallRow(Base):
    __tablename__ = "government_calls"
    __table_args__ = (
        CheckConstraint(NULLABLE_PRODUCT_CHECK, name="product"),
        Index("ix_government_calls_at", "at"),
        Index("ix_government_calls_company", "company_id", "at"),
        Index("ix_government_calls_run_id", "run_id"),  # pruning runs sets these to NULL
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int | None] = mapped_column(company_fk("SET NULL"))
    product: Mapped[str | None] = mapped_column(String(8))
    service: Mapped[str] = mapped_column(String(40))
    operation: Mapped[str | None] = mapped_column(String(100))  # event ids, consChNFe:<key> (0012)
    outcome: Mapped[str] = mapped_column(String(16))
    cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))
    http_status: Mapped[int | None] = mapped_column(Integer)
    duration_ms: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime]
    error_text: Mapped[str | None]
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class SchemaVersionRow(Base):
    """Which version of the app brought the schema to each revision (0012): a workstation whose
    app is older than the database's schema reads here which version to install."""

    __tablename__ = "schema_versions"

    revision: Mapped[str] = mapped_column(String(32), primary_key=True)
    app_version: Mapped[str] = mapped_column(String(40))
    migrated_at: Mapped[datetime]
