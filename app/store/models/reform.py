"""The consumption-tax reform's values (revision 0011): per document, per NF-e item, and the NF-e
keys a nota de crédito or de débito (finNFe 5, 6) references.

A document without the reform's groups has no ``document_reform`` row unless it is such a note
(then ``has_groups`` is false and every value NULL): NULL is "not informed", never zero.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import KEY_LEN, Base, company_fk


class DocumentReformRow(Base):
    """One document's IBS/CBS/IS totals in centavos (NF-e IBSCBSTot, CT-e and NFS-e IBSCBS)."""

    __tablename__ = "document_reform"

    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    has_groups: Mapped[bool] = mapped_column(Boolean)
    unreadable: Mapped[bool] = mapped_column(Boolean)
    purpose: Mapped[str | None] = mapped_column(String(1))  # NF-e finNFe
    base_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_uf_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_mun_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_cents: Mapped[int | None] = mapped_column(BigInteger)
    cbs_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_presumed_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_presumed_suspended_cents: Mapped[int | None] = mapped_column(BigInteger)
    cbs_presumed_cents: Mapped[int | None] = mapped_column(BigInteger)
    cbs_presumed_suspended_cents: Mapped[int | None] = mapped_column(BigInteger)
    is_cents: Mapped[int | None] = mapped_column(BigInteger)
    total_cents: Mapped[int | None] = mapped_column(BigInteger)


class DocumentReformItemRow(Base):
    """One NF-e item's CST, cClassTrib, IBS, CBS and IS (a CT-e or NFS-e has one)."""

    __tablename__ = "document_reform_items"

    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    item_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    cst: Mapped[str | None] = mapped_column(String(3))
    class_code: Mapped[str | None] = mapped_column(String(6))
    base_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_uf_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_mun_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_cents: Mapped[int | None] = mapped_column(BigInteger)
    cbs_cents: Mapped[int | None] = mapped_column(BigInteger)
    is_cents: Mapped[int | None] = mapped_column(BigInteger)


class NfeReferenceRow(Base):
    """The NF-e keys an NF-e references (ide/NFref/refNFe): from a nota de crédito or de débito
    to the notes it adjusts and back. By key: the referenced NF-e may never be captured here."""

    __tablename__ = "nfe_references"
    __table_args__ = (Index("ix_nfe_references_company_id_referenced_key", "company_id", "referenced_key"),)

    company_id: Mapped[int] = mapped_column(company_fk(), primary_key=True)
    nfe_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    referenced_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
