"""Work queues and the audit: gap recoveries, manifestations, calls, prunes, runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.core.products import Product
from app.store.records.statuses import CallOutcome, GapStatus, ManifestationStatus, RunStatus


@dataclass(frozen=True, slots=True)
class GapRecovery:
    id: int
    company_id: int
    product: Product
    nsu: int | None
    access_key: str | None
    attempts: int
    next_attempt_at: datetime
    status: GapStatus
    last_error: str | None


@dataclass(frozen=True, slots=True)
class GapLedgerLine:
    """The NSU holes of one company and product: found, recovered, still pending, given up."""

    company_id: int
    product: Product
    found: int
    recovered: int
    pending: int
    not_found: int  # the service says the NSU never existed (cStat 137 for it)
    abandoned: int  # attempts exhausted


@dataclass(frozen=True, slots=True)
class Manifestation:
    """A recipient (NF-e) or taker (NFS-e) manifestation request and its result."""

    id: int
    company_id: int
    product: Product
    access_key: str
    tp_evento: str
    n_seq_evento: int
    justification: str | None
    automatic: bool
    status: ManifestationStatus
    not_before: datetime
    attempts: int
    cstat: str | None
    x_motivo: str | None
    protocol: str | None
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One government call, as logged."""

    service: str
    outcome: CallOutcome
    at: datetime
    duration_ms: int
    company_id: int | None = None
    product: Product | None = None
    operation: str | None = None
    cstat: str | None = None
    http_status: int | None = None
    error_text: str | None = None
    run_id: int | None = None
    id: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class PruneResult:
    archives: int
    calls: int
    runs: int


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    job_type: str
    trigger: str
    status: RunStatus
    company_id: int | None
    product: Product | None
    reason: str | None
    started_at: datetime
    finished_at: datetime | None
