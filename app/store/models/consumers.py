"""Sightings of another system consuming a company's distribution with the same certificate
(issue 22): when, and the NSU range it took, whose NSUs are gap recoveries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import CSTAT_LEN, PRODUCTS_CHECK, Base, company_fk


class OtherConsumerRow(Base):
    __tablename__ = "other_consumers"
    __table_args__ = (
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("to_nsu >= from_nsu", name="range"),
        Index("ix_other_consumers_product_seen_at", "product", "seen_at"),
        Index("ix_other_consumers_company_id_product", "company_id", "product"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    seen_at: Mapped[datetime]
    cstat: Mapped[str] = mapped_column(String(CSTAT_LEN))
    from_nsu: Mapped[int] = mapped_column(BigInteger)  # exclusive: our cursor then
    to_nsu: Mapped[int] = mapped_column(BigInteger)  # inclusive: the ultNSU the service returned
    skipped: Mapped[int] = mapped_column(Integer)
    queued: Mapped[int] = mapped_column(Integer)
    out_of_reach: Mapped[int] = mapped_column(Integer)
