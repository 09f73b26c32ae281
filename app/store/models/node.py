"""The office's capture node: the one lease row every workstation competes for."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import Base


class NodeLeaseRow(Base):
    """Who captures for the office (one row, ``name`` 'capture'), until when, and the fencing
    token: incremented by every acquisition, so a node's writes carry proof that nobody took the
    lease since (``app.store.lease``). ``node_id`` NULL: released, nobody captures."""

    __tablename__ = "node_lease"

    name: Mapped[str] = mapped_column(String(20), primary_key=True)
    token: Mapped[int] = mapped_column(BigInteger)
    node_id: Mapped[str | None] = mapped_column(String(64))
    workstation: Mapped[str | None]
    pid: Mapped[int | None]
    acquired_at: Mapped[datetime | None]
    renewed_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]
