"""The captured documents and events: versions, parties, NFS-e details, carried NF-e keys, the
distribution items they came in.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.models.base import (
    CSTAT_LEN,
    ID_LEN,
    KEY_LEN,
    PRODUCTS_CHECK,
    Base,
    company_fk,
)

# The documents the IBS/CBS credit report counts (revision 0015): received, authorised, readable
# and listed. The report's SQL repeats this text literally (app.store.reform_lines): SQLite uses a
# partial index only for a query whose terms contain its WHERE, and a bound parameter is no match.
RECEIVED_AUTHORISED = "direction = 'received' AND status = 'authorised' AND quarantined = false AND withheld IS NULL"

VALUED = "total_cents IS NOT NULL"  # the value walks' partial indexes (revision 0016)

# PostgreSQL only (revision 0018): the grid's name search reads the dictionary of the names
# (``document_names``, kept by triggers) and then the documents by name, in these indexes.
# SQLAlchemy's metadata cannot hold an index or table of one dialect, so they are not declared
# below; the drift check (tests/store/test_db.py) leaves them out by name.
POSTGRESQL_ONLY_INDEXES = frozenset({"ix_documents_emitter_name_grid", "ix_documents_recipient_name_grid"})
POSTGRESQL_ONLY_TABLES = frozenset({"document_names"})


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (
        # One document per company, product and key; NULL keys (quarantined, unknown) never clash.
        UniqueConstraint("company_id", "product", "access_key"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        CheckConstraint("direction IN ('received', 'emitted')", name="direction"),
        # The grid: one company and product ordered by issue date; covering for a page of ids.
        Index("ix_documents_grid", "company_id", "product", "issued_at", "id"),
        # The grid of every company (the window's default): product and issue period, in issue
        # order. ix_documents_grid leads with company_id, so without this SQLite sorted the whole
        # period, or walked the table in ix_documents_nsu's order for a name filter or another
        # sort (seconds at a million documents: tests/benchmarks/bench_grid.py, revision 0005).
        # Partial on purpose: a period implies "issued_at IS NOT NULL", a key look-up without one
        # does not, so it keeps the unique index instead of a walk of this one in date order
        # under LIMIT (a key with a period needs "+issued_at" in the grid's SQL: revision 0005).
        Index(
            "ix_documents_product_grid",
            "product",
            "issued_at",
            "id",
            sqlite_where=text("issued_at IS NOT NULL"),
            postgresql_where=text("issued_at IS NOT NULL"),
        ),
        # The name search over the same orders, on the index alone (revision 0017): SQLite picks
        # them only when a statement reads the names.
        Index("ix_documents_grid_names", "company_id", "product", "issued_at", "id", "emitter_name", "recipient_name"),
        Index(
            "ix_documents_product_grid_names",
            "product",
            "issued_at",
            "id",
            "emitter_name",
            "recipient_name",
            sqlite_where=text("issued_at IS NOT NULL"),
            postgresql_where=text("issued_at IS NOT NULL"),
        ),
        # No index on access_key alone: every look-up by key names the company and product and
        # uses the unique index above; a second random-order index doubled the pages a lot
        # writes (revision 0002).
        Index("ix_documents_nsu", "company_id", "product", "nsu"),
        # The grid by capture date, the window's default period; partial so that only a capture
        # period uses it (revision 0008).
        Index(
            "ix_documents_product_captured",
            "product",
            "created_at",
            "issued_at",
            "id",
            sqlite_where=text("created_at IS NOT NULL"),
            postgresql_where=text("created_at IS NOT NULL"),
        ),
        # The grid sorted by value, walked in its order (app.store.grid_order, revision 0014).
        Index("ix_documents_product_value", "product", "total_cents", "id"),
        # ... largest first, on the index alone, every company's or one's (revision 0016): partial,
        # so that only the walk, which says "total_cents IS NOT NULL", uses them.
        *(
            Index(
                name,
                *lead,
                "total_cents",
                "id",
                "issued_at",
                "created_at",
                sqlite_where=text(VALUED),
                postgresql_where=text(VALUED),
            )
            for name, lead in (
                ("ix_documents_product_valued", ("product",)),
                ("ix_documents_company_valued", ("company_id", "product")),
            )
        ),
        # The window's banner (revision 0014): the cancelled documents, covering for the check of
        # their events, and the quarantined ones; both a few percent of the rows or less, which
        # SQLite found by reading the whole table at every opening and every change of filter.
        Index(
            "ix_documents_cancelled",
            "product",
            "company_id",
            "updated_at",
            "access_key",
            "created_at",
            sqlite_where=text("status = 'cancelled'"),
            postgresql_where=text("status = 'cancelled'"),
        ),
        Index(
            "ix_documents_quarantined",
            "product",
            "company_id",
            sqlite_where=text("quarantined = true"),
            postgresql_where=text("quarantined = true"),
        ),
        # The IBS/CBS report's count per company, product and month of issue (revision 0015):
        # covering and partial, so the count reads this index (tens of MB at a million documents)
        # where it read the whole table (1.2 GB). Issue date first: the capture's inserts land
        # near its end, as documents arrive roughly in issue order.
        Index(
            "ix_documents_received_issued",
            "issued_at",
            "company_id",
            "product",
            sqlite_where=text(RECEIVED_AUTHORISED),
            postgresql_where=text(RECEIVED_AUTHORISED),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    kind: Mapped[str] = mapped_column(String(20))
    access_key: Mapped[str | None] = mapped_column(String(KEY_LEN))
    nsu: Mapped[int | None] = mapped_column(BigInteger)  # of the current version
    model: Mapped[str | None] = mapped_column(String(2))
    serie: Mapped[int | None] = mapped_column(Integer)
    number: Mapped[int | None] = mapped_column(BigInteger)
    emitter_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    emitter_name: Mapped[str | None] = mapped_column(String(300))  # NFS-e xNome: 300 (0012)
    recipient_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    recipient_name: Mapped[str | None] = mapped_column(String(300))
    total_cents: Mapped[int | None] = mapped_column(BigInteger)
    issued_at: Mapped[datetime | None]
    issued_offset_minutes: Mapped[int | None] = mapped_column(SmallInteger)
    direction: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(12))
    situation: Mapped[str | None] = mapped_column(String(255))  # a CT-e's xMotivo (0012)
    quarantined: Mapped[bool] = mapped_column(Boolean)
    parse_error: Mapped[str | None]
    version_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # NFS-e delivery rules (records.Withheld): stored, but not listed, notified or exported yet
    withheld: Mapped[str | None] = mapped_column(String(12))


class DocumentVersionRow(Base):
    """Every distinct XML a document arrived as; exactly one is current."""

    __tablename__ = "document_versions"
    __table_args__ = (
        UniqueConstraint("document_id", "xml_sha256"),
        Index(
            "uq_document_versions_current",
            "document_id",
            unique=True,
            sqlite_where=text("is_current = 1"),
            postgresql_where=text("is_current"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    nsu: Mapped[int | None] = mapped_column(BigInteger)
    schema: Mapped[str | None] = mapped_column(String(60))
    xml_zlib: Mapped[bytes] = mapped_column(LargeBinary)
    xml_sha256: Mapped[str] = mapped_column(String(64))
    xml_size: Mapped[int] = mapped_column(Integer)
    is_current: Mapped[bool] = mapped_column(Boolean)
    parse_error: Mapped[str | None]
    received_at: Mapped[datetime]


class DocumentPartyRow(Base):
    __tablename__ = "document_parties"
    __table_args__ = (
        Index("ix_document_parties_document_id", "document_id"),
        Index("ix_document_parties_tax_id", "tax_id", "role"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    tax_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    name: Mapped[str | None] = mapped_column(String(300))


class EventRow(Base):
    """Events by key: they may arrive before (or without) their document, so no FK to it."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "access_key", "tp_evento", "n_seq_evento"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        # Look-ups by key go through the unique index above (company, product, key first).
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    kind: Mapped[str] = mapped_column(String(20))
    access_key: Mapped[str] = mapped_column(String(KEY_LEN))
    tp_evento: Mapped[str] = mapped_column(String(6))
    n_seq_evento: Mapped[int] = mapped_column(Integer)
    nsu: Mapped[int | None] = mapped_column(BigInteger)
    schema: Mapped[str | None] = mapped_column(String(60))
    description: Mapped[str | None] = mapped_column(String(200))
    protocol: Mapped[str | None] = mapped_column(String(20))
    event_at: Mapped[datetime | None]
    cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))
    author_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    xml_zlib: Mapped[bytes] = mapped_column(LargeBinary)
    xml_sha256: Mapped[str] = mapped_column(String(64))
    xml_size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    substitute_key: Mapped[str | None] = mapped_column(String(KEY_LEN))  # NFS-e 105102: chSubstituta


class NfseDetailsRow(Base):
    """An NFS-e's service, values and taxes beyond the grid's columns (one row per document)."""

    __tablename__ = "nfse_details"

    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    competence: Mapped[date | None] = mapped_column(Date)
    processed_at: Mapped[datetime | None]
    national_code: Mapped[str | None] = mapped_column(String(6))
    municipal_code: Mapped[str | None] = mapped_column(String(20))
    nbs: Mapped[str | None] = mapped_column(String(9))
    description: Mapped[str | None]
    incidence_code: Mapped[str | None] = mapped_column(String(7))
    incidence_name: Mapped[str | None] = mapped_column(String(150))
    service_cents: Mapped[int | None] = mapped_column(BigInteger)
    net_cents: Mapped[int | None] = mapped_column(BigInteger)
    iss_rate: Mapped[str | None] = mapped_column(String(8))
    iss_cents: Mapped[int | None] = mapped_column(BigInteger)
    retained_cents: Mapped[int | None] = mapped_column(BigInteger)
    iss_retention: Mapped[str | None] = mapped_column(String(1))
    intermediary_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    ibscbs_base_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibscbs_total_cents: Mapped[int | None] = mapped_column(BigInteger)
    ibs_cents: Mapped[int | None] = mapped_column(BigInteger)
    cbs_cents: Mapped[int | None] = mapped_column(BigInteger)
    replaced_key: Mapped[str | None] = mapped_column(String(KEY_LEN))


class CarriedNfeRow(Base):
    """The NF-e keys a CT-e carries (infDoc/infNFe/chave): from an NF-e to the CT-e that moved it
    and back. By key, like events: the NF-e may never be captured by this company."""

    __tablename__ = "cte_carried_nfe"
    __table_args__ = (Index("ix_cte_carried_nfe_company_id_nfe_key", "company_id", "nfe_key"),)

    company_id: Mapped[int] = mapped_column(company_fk(), primary_key=True)
    cte_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    nfe_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)


class DistributionItemRow(Base):
    """What each NSU brought: every NSU is stored exactly once, so gaps are a range query."""

    __tablename__ = "distribution_items"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "nsu"),
        CheckConstraint(PRODUCTS_CHECK, name="product"),
        Index("ix_distribution_items_received_at", "company_id", "product", "received_at"),
        # FK lookups: without them each deleted document or event scans the whole table.
        Index("ix_distribution_items_document_id", "document_id"),
        Index("ix_distribution_items_event_id", "event_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(company_fk())
    product: Mapped[str] = mapped_column(String(8))
    nsu: Mapped[int] = mapped_column(BigInteger)
    schema: Mapped[str | None] = mapped_column(String(60))
    document_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id", ondelete="SET NULL"))
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="SET NULL"))
    received_at: Mapped[datetime]
