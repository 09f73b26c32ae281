"""Declarative models: the schema. Only the store's repositories touch these classes.

Conventions: every constraint and index has a name (the naming convention below), so Alembic
can compare the models with a migrated database; instants are ``UtcDateTime``; enum columns are
short strings guarded by CHECK constraints; money is integer centavos (SQLite has no decimal
type: ``Numeric`` would round-trip through float, and sums of cents stay exact); XML is zlib
bytes beside the sha256 of the original.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.store.types import UtcDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

_PRODUCTS = "product IN ('nfe', 'cte', 'nfse')"
_NULLABLE_PRODUCT = "product IS NULL OR product IN ('nfe', 'cte', 'nfse')"

KEY_LEN = 50  # 44 for NF-e/CT-e, 50 for NFS-e
ID_LEN = 14  # CNPJ (14) or CPF (11)
CSTAT_LEN = 10  # '138', or an ADN code such as 'E2220'


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime, str: Text}  # noqa: RUF012 (SQLAlchemy's hook)


def _company_fk(ondelete: str = "CASCADE") -> ForeignKey:
    return ForeignKey("companies.id", ondelete=ondelete)


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
        CheckConstraint(_PRODUCTS, name="product"),
        CheckConstraint("environment IN ('producao', 'homologacao')", name="environment"),
        CheckConstraint("ciencia_wait_minutes >= 5", name="ciencia_wait_minutes"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
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
        CheckConstraint(_PRODUCTS, name="product"),
        CheckConstraint("ult_nsu >= 0 AND max_nsu >= 0", name="nsu_non_negative"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
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
        CheckConstraint(_PRODUCTS, name="product"),
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
    __table_args__ = (CheckConstraint(_PRODUCTS, name="product"),)

    product: Mapped[str] = mapped_column(String(8), primary_key=True)
    answers_by: Mapped[datetime]


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (
        # One document per company, product and key; NULL keys (quarantined, unknown) never clash.
        UniqueConstraint("company_id", "product", "access_key"),
        CheckConstraint(_PRODUCTS, name="product"),
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
        ),
        # No index on access_key alone: every look-up by key names the company and product and
        # uses the unique index above; a second random-order index doubled the pages a lot
        # writes (revision 0002).
        Index("ix_documents_nsu", "company_id", "product", "nsu"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
    product: Mapped[str] = mapped_column(String(8))
    kind: Mapped[str] = mapped_column(String(20))
    access_key: Mapped[str | None] = mapped_column(String(KEY_LEN))
    nsu: Mapped[int | None] = mapped_column(BigInteger)  # of the current version
    model: Mapped[str | None] = mapped_column(String(2))
    serie: Mapped[int | None] = mapped_column(Integer)
    number: Mapped[int | None] = mapped_column(BigInteger)
    emitter_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    emitter_name: Mapped[str | None] = mapped_column(String(200))
    recipient_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    recipient_name: Mapped[str | None] = mapped_column(String(200))
    total_cents: Mapped[int | None] = mapped_column(BigInteger)
    issued_at: Mapped[datetime | None]
    issued_offset_minutes: Mapped[int | None] = mapped_column(SmallInteger)
    direction: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(12))
    situation: Mapped[str | None] = mapped_column(String(40))
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
    name: Mapped[str | None] = mapped_column(String(200))


class EventRow(Base):
    """Events by key: they may arrive before (or without) their document, so no FK to it."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "access_key", "tp_evento", "n_seq_evento"),
        CheckConstraint(_PRODUCTS, name="product"),
        # Look-ups by key go through the unique index above (company, product, key first).
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
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

    company_id: Mapped[int] = mapped_column(_company_fk(), primary_key=True)
    cte_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    nfe_key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)


class DistributionItemRow(Base):
    """What each NSU brought: every NSU is stored exactly once, so gaps are a range query."""

    __tablename__ = "distribution_items"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "nsu"),
        CheckConstraint(_PRODUCTS, name="product"),
        Index("ix_distribution_items_received_at", "company_id", "product", "received_at"),
        # FK lookups: without them each deleted document or event scans the whole table.
        Index("ix_distribution_items_document_id", "document_id"),
        Index("ix_distribution_items_event_id", "event_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
    product: Mapped[str] = mapped_column(String(8))
    nsu: Mapped[int] = mapped_column(BigInteger)
    schema: Mapped[str | None] = mapped_column(String(60))
    document_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id", ondelete="SET NULL"))
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="SET NULL"))
    received_at: Mapped[datetime]


class ArchivedExchangeRow(Base):
    """A government request and response kept for audit; pruned after the retention period."""

    __tablename__ = "archived_exchanges"
    __table_args__ = (
        Index("ix_archived_exchanges_created_at", "created_at"),
        Index("ix_archived_exchanges_call_id", "call_id"),  # pruning calls sets these to NULL
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    call_id: Mapped[int | None] = mapped_column(ForeignKey("government_calls.id", ondelete="SET NULL"))
    company_id: Mapped[int | None] = mapped_column(_company_fk("SET NULL"))
    service: Mapped[str] = mapped_column(String(40))
    request_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    response_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]


class GapRecoveryRow(Base):
    __tablename__ = "gap_recoveries"
    __table_args__ = (
        UniqueConstraint("company_id", "product", "nsu"),
        UniqueConstraint("company_id", "product", "access_key"),
        CheckConstraint(_PRODUCTS, name="product"),
        CheckConstraint("nsu IS NOT NULL OR access_key IS NOT NULL", name="nsu_or_key"),
        CheckConstraint("status IN ('pending', 'recovered', 'not_found', 'abandoned')", name="status"),
        Index("ix_gap_recoveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
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
        CheckConstraint(_PRODUCTS, name="product"),
        CheckConstraint("status IN ('pending', 'sent', 'accepted', 'rejected')", name="status"),
        Index("ix_manifestations_due", "status", "not_before"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int] = mapped_column(_company_fk())
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
        CheckConstraint(_PRODUCTS, name="product"),
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
        CheckConstraint(_NULLABLE_PRODUCT, name="product"),
        Index("ix_runs_started_at", "started_at"),
        Index("ix_runs_status", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_type: Mapped[str] = mapped_column(String(40))
    company_id: Mapped[int | None] = mapped_column(_company_fk("SET NULL"))
    product: Mapped[str | None] = mapped_column(String(8))
    trigger: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(12))
    reason: Mapped[str | None]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class GovernmentCallRow(Base):
    __tablename__ = "government_calls"
    __table_args__ = (
        CheckConstraint(_NULLABLE_PRODUCT, name="product"),
        Index("ix_government_calls_at", "at"),
        Index("ix_government_calls_company", "company_id", "at"),
        Index("ix_government_calls_run_id", "run_id"),  # pruning runs sets these to NULL
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    company_id: Mapped[int | None] = mapped_column(_company_fk("SET NULL"))
    product: Mapped[str | None] = mapped_column(String(8))
    service: Mapped[str] = mapped_column(String(40))
    operation: Mapped[str | None] = mapped_column(String(20))
    outcome: Mapped[str] = mapped_column(String(16))
    cstat: Mapped[str | None] = mapped_column(String(CSTAT_LEN))
    http_status: Mapped[int | None] = mapped_column(Integer)
    duration_ms: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime]
    error_text: Mapped[str | None]
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


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
    company_id: Mapped[int] = mapped_column(_company_fk(), unique=True)
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
    company_id: Mapped[int] = mapped_column(_company_fk())
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
