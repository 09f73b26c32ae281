"""Automatic exports and the hand-off to other systems (revision 0007)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import (
    KEY_LEN,
    Base,
    company_fk,
)

# ---------------------------------------------------------------- export and hand-off (revision 0007)

_ITEM_TYPES = "item_type IN ('document', 'event')"


class ExportProfileRow(Base):
    """An automatic export: a folder, a file pattern, what goes in, and how far it has read.

    ``watermark`` is the last ``distribution_items.id`` turned into queue rows: every captured
    document or event arrives with an NSU, so the items table is the stream of what arrived.
    """

    __tablename__ = "export_profiles"
    __table_args__ = (CheckConstraint("cancelled_mode IN ('move', 'beside')", name="cancelled_mode"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    destination: Mapped[str]
    pattern: Mapped[str]
    products: Mapped[list[str]] = mapped_column(JSON)  # empty: every product
    kinds: Mapped[list[str]] = mapped_column(JSON)  # complete, summary, event; empty: all
    directions: Mapped[list[str]] = mapped_column(JSON)  # empty: both
    company_ids: Mapped[list[int]] = mapped_column(JSON)  # empty: every company
    only_authorised: Mapped[bool] = mapped_column(Boolean)
    cancelled_mode: Mapped[str] = mapped_column(String(8))
    include_pdf: Mapped[bool] = mapped_column(Boolean)
    active: Mapped[bool] = mapped_column(Boolean)
    watermark: Mapped[int] = mapped_column(BigInteger)
    exported_count: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str | None]
    failing_since: Mapped[datetime | None]
    next_attempt_at: Mapped[datetime | None]
    last_export_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ExportQueueRow(Base):
    """A document or event a profile still has to write (kept until the file is on disk)."""

    __tablename__ = "export_queue"
    __table_args__ = (
        UniqueConstraint("profile_id", "item_type", "item_id"),
        CheckConstraint(_ITEM_TYPES, name="item_type"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    profile_id: Mapped[int] = mapped_column(ForeignKey("export_profiles.id", ondelete="CASCADE"))
    item_type: Mapped[str] = mapped_column(String(8))
    item_id: Mapped[int] = mapped_column(Integer)
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]


class HandoffTargetRow(Base):
    """A company's ERP endpoint. Its signing secret is in the keyring, never here."""

    __tablename__ = "handoff_targets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk(), unique=True)
    url: Mapped[str]
    active: Mapped[bool] = mapped_column(Boolean)
    watermark: Mapped[int] = mapped_column(BigInteger)  # last distribution_items.id queued
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class HandoffDeliveryRow(Base):
    """One notification to an ERP and how its delivery went: the delivery log."""

    __tablename__ = "handoff_deliveries"
    __table_args__ = (
        UniqueConstraint("company_id", "idempotency_key"),
        CheckConstraint(_ITEM_TYPES, name="item_type"),
        CheckConstraint("status IN ('pending', 'delivered')", name="status"),
        Index("ix_handoff_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    idempotency_key: Mapped[str] = mapped_column(String(120))
    item_type: Mapped[str] = mapped_column(String(8))
    item_id: Mapped[int] = mapped_column(Integer)
    access_key: Mapped[str | None] = mapped_column(String(KEY_LEN))
    nsu: Mapped[int | None] = mapped_column(BigInteger)  # the arrival notified: its version's XML is sent
    event_type: Mapped[str] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(10))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime]
    last_http_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None]
    created_at: Mapped[datetime]
    delivered_at: Mapped[datetime | None]
