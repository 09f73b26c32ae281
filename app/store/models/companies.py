"""The companies and their capture: settings, cursor and cadence, global pauses, call leases."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    Integer,
    String,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import (
    CSTAT_LEN,
    PRODUCTS_CHECK,
    Base,
    company_fk,
)


class CompanyRow(Base):
    __tablename__ = "companies"
    __table_args__ = (CheckConstraint("length(cnpj) = 14", name="cnpj_length"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cnpj: Mapped[str] = mapped_column(String(14), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    # Id of the encrypted certificate in the data folder and keyring; never the secret itself.
    certificate_ref: Mapped[str | None] = mapped_column(String(64))
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class CaptureSettingsRow(Base):
    __tablename__ = "capture_settings"
    __table_args__ = (
        UniqueConstraint("company_id", "product"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("environment IN ('producao', 'homologacao')", name="environment"),
        CheckConstraint("ciencia_wait_minutes >= 5", name="ciencia_wait_minutes"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    environment: Mapped[str] = mapped_column(String(12))
    enabled: Mapped[bool] = mapped_column(Boolean)
    auto_ciencia: Mapped[bool] = mapped_column(Boolean)
    ciencia_wait_minutes: Mapped[int] = mapped_column(Integer)
    cte_event_types: Mapped[list[str]] = mapped_column(JSON)
    cte_party_roles: Mapped[list[str]] = mapped_column(JSON)
    nfse_cutoff_date: Mapped[date | None] = mapped_column(Date)
    nfse_capture_own_issued: Mapped[bool] = mapped_column(Boolean)
    c_uf_autor: Mapped[str | None] = mapped_column(String(2))
    updated_at: Mapped[datetime]
    nfse_history_released: Mapped[bool] = mapped_column(Boolean, server_default=false())


class CaptureStateRow(Base):
    __tablename__ = "capture_state"
    __table_args__ = (
        UniqueConstraint("company_id", "product"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("ult_nsu >= 0 AND max_nsu >= 0", name="nsu_non_negative"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    ult_nsu: Mapped[int] = mapped_column(BigInteger)
    max_nsu: Mapped[int] = mapped_column(BigInteger)
    last_query_at: Mapped[datetime | None]
    last_dh_resp: Mapped[datetime | None]
    clock_offset_ms: Mapped[int | None] = mapped_column(Integer)
    next_query_at: Mapped[datetime | None]
    wait_reason: Mapped[str | None]
    blocked_until: Mapped[datetime | None]
    block_reason: Mapped[str | None]
    point_queries_blocked_until: Mapped[datetime | None]
    paused: Mapped[bool] = mapped_column(Boolean)
    consecutive_failures: Mapped[int] = mapped_column(Integer)
    last_cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))
    last_message: Mapped[str | None]
    disabled_reason: Mapped[str | None]
    updated_at: Mapped[datetime]


class ServicePauseRow(Base):
    __tablename__ = "service_pauses"
    __table_args__ = (
        UniqueConstraint("product", "environment"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    product: Mapped[str] = mapped_column(String(8))
    environment: Mapped[str] = mapped_column(String(12))
    paused_until: Mapped[datetime]
    reason: Mapped[str]
    cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))


class CallLeaseRow(Base):
    """Until when the service of this data folder may be waiting for answers, per product.

    Extended (committed) before a call would pass it, deleted when the service stops cleanly:
    a row found at start-up means a process died with calls perhaps unanswered.
    """

    __tablename__ = "call_leases"
    __table_args__ = (CheckConstraint(PRODUCTS_CHECK, name="product"),)

    product: Mapped[str] = mapped_column(String(8), primary_key=True)
    answers_by: Mapped[datetime]
