"""What every capture engine needs: the store's repositories, the clock, the clients, certificates.

One ``CaptureContext`` per data folder; the engines are cheap objects over it. Listeners receive
``CaptureNotice`` values from worker threads: the UI adapts them to Qt signals itself.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from app.certs.a1 import A1Certificate, CertificateExpired, CertificateNotYetValid
from app.certs.vault import CertificateVault
from app.config.endpoints import Service
from app.config.settings import Settings
from app.core.cadence import resume
from app.core.clock import Clock
from app.core.errors import CapturaError
from app.core.products import Product
from app.fiscal.errors import CommunicationError, HttpStatusError, ServiceTimeout
from app.fiscal.http import HttpClientFactory
from app.store.audit import AuditRepository
from app.store.companies import CompanyRepository
from app.store.cursors import CaptureStateRepository
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.events import EventRepository
from app.store.items import DistributionItemRepository
from app.store.manifestations import ManifestationRepository
from app.store.quota import PointQueryLedger
from app.store.records import CallOutcome, CallRecord, Company
from app.store.recoveries import GapRecoveryRepository
from app.store.runs import RunRepository
from app.store.unit import Unit, write_unit


@dataclass(frozen=True, slots=True)
class CaptureNotice:
    """Something a person may want to see: a document arrived, a company got blocked, an alert."""

    kind: str  # "documents", "status", "alert", "manifestation", "recovery"
    company_id: int | None
    product: Product | None
    message: str
    count: int = 0


Listener = Callable[[CaptureNotice], None]
T = TypeVar("T")


class CertificateSource:
    """Loads each company's A1 from the vault once and says, before any call, if it is unusable."""

    def __init__(self, vault: CertificateVault) -> None:
        self._vault = vault
        self._cache: dict[str, A1Certificate] = {}
        self._lock = threading.Lock()

    def get(self, company: Company, now: datetime) -> A1Certificate:
        """The certificate, or a ``CapturaError`` whose message says why it cannot be used."""
        ref = company.certificate_ref
        if ref is None:
            raise CapturaError("Nenhum certificado instalado para esta empresa.")
        with self._lock:
            cached = self._cache.get(ref)
        if cached is not None:
            if now > cached.not_after:
                raise CertificateExpired(cached.not_after)
            if now < cached.not_before:
                raise CertificateNotYetValid(cached.not_before)
            return cached
        cert = self._vault.load(ref, now)  # raises CertificateExpired and friends with their messages
        with self._lock:
            self._cache[ref] = cert
        return cert

    def problem(self, company: Company, now: datetime) -> str | None:
        try:
            self.get(company, now)
        except CapturaError as error:
            return error.message
        return None

    def forget(self, ref: str) -> None:
        """After a certificate is replaced: the next use reads the vault again."""
        with self._lock:
            self._cache.pop(ref, None)


@dataclass
class CaptureContext:
    """One data folder's capture dependencies; thread-safe to share between engines."""

    db: Database
    clock: Clock
    settings: Settings
    http: HttpClientFactory
    certificates: CertificateSource
    rng: random.Random = field(default_factory=random.Random)
    listeners: list[Listener] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.companies = CompanyRepository(self.db)
        self.cursors = CaptureStateRepository(self.db)
        self.documents = DocumentRepository(self.db)
        self.events = EventRepository(self.db)
        self.items = DistributionItemRepository(self.db)
        self.audit = AuditRepository(self.db)
        self.runs = RunRepository(self.db)
        self.recoveries = GapRecoveryRepository(self.db)
        self.manifestations = ManifestationRepository(self.db)
        self.quota = PointQueryLedger(self.db)
        self._rng_lock = threading.Lock()

    def jitter(self) -> float:
        """A value in [0, 1) from the one seeded RNG (thread-safe)."""
        return self.draw(_unit)

    def draw(self, fn: Callable[[random.Random], T]) -> T:
        """Use the one seeded RNG under its lock (runs are reproducible from the seed)."""
        with self._rng_lock:
            return fn(self.rng)

    def unit(self) -> AbstractContextManager[Unit]:
        """One write transaction for everything an answer changes (``app.store.unit``)."""
        return write_unit(self.db)

    def archive(self, service: Service, company_id: int, call_id: int, request: bytes, response: bytes) -> None:
        """Keep an exchange that carried documents or a rejection (the rule book's audit)."""
        self.audit.archive_exchange(
            service.value, request=request, response=response, company_id=company_id, call_id=call_id
        )

    def notify(self, notice: CaptureNotice) -> None:
        for listener in list(self.listeners):
            listener(notice)


def call_record(
    service: Service,
    product: Product,
    company_id: int,
    operation: str,
    at: datetime,
    started: float,
    outcome: CallOutcome,
    *,
    cstat: str | None = None,
    http_status: int | None = None,
    error: str | None = None,
    run_id: int | None = None,
) -> CallRecord:
    """The call log's row for one government call (``started`` is its ``time.monotonic()``)."""
    return CallRecord(
        service=service.value,
        outcome=outcome,
        at=at,
        duration_ms=int((time.monotonic() - started) * 1000),
        company_id=company_id,
        product=product,
        operation=operation,
        cstat=cstat,
        http_status=http_status,
        error_text=error,
        run_id=run_id,
    )


def _unit(rng: random.Random) -> float:
    return rng.random()


def outcome_of(error: CommunicationError) -> CallOutcome:
    """How a failed call is logged."""
    if isinstance(error, ServiceTimeout):
        return CallOutcome.TIMEOUT
    if isinstance(error, HttpStatusError):
        return CallOutcome.HTTP_ERROR
    return CallOutcome.NETWORK_ERROR


def resume_stopped(cursors: CaptureStateRepository, company_id: int, product: Product) -> bool:
    """Clear a company's stop (communication failures, a refused request) or the user's pause;
    waits and blocks still in force are kept. False when it was neither stopped nor paused."""
    state = cursors.get(company_id, product)
    if not (state.disabled_reason or state.paused):
        return False
    cursors.save(resume(state))
    return True
