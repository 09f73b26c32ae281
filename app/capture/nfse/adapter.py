"""NFS-e Inbound on the distribution engine (rule book §6.2-6.4): the ADN's REST distribution.

``query`` asks ``GET /DFe/{NSU}`` (``app.fiscal.adn``) from the cursor and applies the ADN's pure
answer policy (``app.core.cadence_adn``): up to 50 lots a run, 1 h after no documents, 429 →
Retry-After or 1 h, REJEICAO → 10 min only when the run captured nothing, transient failures
retried 1, 2, 4 s in the call and then exponential 1 min..1 h, 10 certificate refusals in a row
disable the company's NFS-e capture with the reason. The circuit breakers (per certificate 10
failures, global 50, open 60 s: ``app.core.breakers``) are held here, for every company of the
capture. A lot's own writes (details, delivery flags, substitute keys, cancellations) go in the
lot's transaction (:func:`store_nfse_extras`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.capture.context import CaptureContext, outcome_of
from app.capture.engine.adapter import LotAnswer, RunSoFar, Stored, StoredLot, StoreInput
from app.capture.nfse.processing import PRODUCT, is_registered_cancellation, notifies, process_document
from app.config.endpoints import Service
from app.core.breakers import Breakers, open_reason
from app.core.cadence import (
    NFSE_RULES,
    CaptureState,
    CommunicationFailure,
    Transition,
    certificate_unavailable,
    display_time,
    waiting,
)
from app.core.cadence_adn import AdnCertificateRejected, AdnResult, AdnStatus, AdnThrottled, apply_adn
from app.core.errors import CapturaError
from app.core.products import Product
from app.documents.nfse import CANCELLING_EVENTS
from app.fiscal.adn import SERVICE, AdnCertificateRefused, AdnClient, CircuitOpen, may_have_reached_service
from app.fiscal.adn import AdnThrottled as Throttled
from app.fiscal.errors import CommunicationError
from app.store.records import (
    CallOutcome,
    CaptureSettings,
    Company,
    DocumentInput,
    DocumentKind,
    EventInput,
    NfseDetails,
    StoredDocument,
    StoredEvent,
)
from app.store.unit import Unit

log = logging.getLogger(__name__)
OPERATION = "GET /DFe"


class BreakerBoard:
    """The NFS-e capture's breakers (pure state in ``app.core.breakers``) under one lock."""

    def __init__(self, clock_now: Callable[[], datetime]) -> None:
        self._now = clock_now
        self._state = Breakers()
        self._lock = threading.Lock()

    @property
    def state(self) -> Breakers:
        with self._lock:
            return self._state

    def gate(self, fingerprint: str) -> _Gate:
        return _Gate(self, fingerprint)

    def open_until(self, fingerprint: str) -> tuple[datetime, str] | None:
        now = self._now()
        with self._lock:
            until = self._state.open_until(fingerprint, now)
            whole = self._state.global_open(now)
        return None if until is None else (until, open_reason(global_open=whole))

    def record(self, fingerprint: str, failed: bool) -> None:
        now = self._now()
        with self._lock:
            self._state = self._state.failed(fingerprint, now) if failed else self._state.succeeded(fingerprint)


@dataclass(frozen=True, slots=True)
class _Gate:
    """``app.fiscal.adn.BreakerGate`` for one certificate."""

    board: BreakerBoard
    fingerprint: str

    def open_until(self) -> tuple[datetime, str] | None:
        return self.board.open_until(self.fingerprint)

    def record(self, failed: bool) -> None:
        self.board.record(self.fingerprint, failed)


@dataclass(slots=True)
class NfseAdapter:
    """Satisfies ``app.capture.engine.adapter.DistributionAdapter`` for NFS-e (the ADN)."""

    ctx: CaptureContext
    product: Product = PRODUCT
    service: Service = SERVICE
    job_type: str = "nfse_distribution"
    operation: str = OPERATION
    breakers: BreakerBoard = field(init=False)

    def __post_init__(self) -> None:
        self.breakers = BreakerBoard(self.ctx.clock.now)

    def query(self, company: Company, settings: CaptureSettings, state: CaptureState, run: RunSoFar) -> LotAnswer:
        rules = NFSE_RULES
        clock = self.ctx.clock
        try:
            a1 = self.ctx.certificates.get(company, clock.now())
        except CapturaError as error:  # missing, expired, unreadable: wait 1 h, company kept active
            return LotAnswer(Transition(certificate_unavailable(state, rules, clock.now(), error.message)), None)
        client = AdnClient.from_factory(
            self.ctx.http, a1, settings.environment, clock=clock, gate=self.breakers.gate(a1.sha256_fingerprint)
        )
        try:
            reply = client.distribution(company.cnpj, state.ult_nsu)
        except CircuitOpen as error:
            held = Transition(_held(state, error.until, error.message))
            return LotAnswer(held, None)
        except Throttled as error:
            transition = apply_adn(state, rules, clock.now(), AdnThrottled(error.retry_after))
            return LotAnswer(transition, CallOutcome.REJECTED, code="429", http_status=429, error=error.message)
        except AdnCertificateRefused as error:
            transition = apply_adn(state, rules, clock.now(), AdnCertificateRejected(error.message))
            return LotAnswer(transition, CallOutcome.REJECTED, http_status=error.status, error=error.message)
        except CommunicationError as error:
            failure = CommunicationFailure(error.message, may_have_reached_service(error))
            transition = apply_adn(state, rules, clock.now(), failure)
            return LotAnswer(transition, outcome_of(error), error=error.message)
        now = clock.now()
        items = [process_document(company.cnpj, doc, settings) for doc in reply.documents]
        result = AdnResult(
            status=reply.status,
            received_nsus=tuple(doc.nsu for doc in reply.documents),
            message=reply.message,
            error_codes=reply.error_codes,
            lots_in_run=run.lots + 1,
            captured_in_run=run.documents > 0 or bool(reply.documents),
        )
        transition = apply_adn(state, rules, now, result)
        rejected = reply.status is AdnStatus.REJECTED
        if rejected:
            log.warning("ADN rejeitou a consulta da empresa %s: %s", company.id, reply.message or "sem código")
        code = (reply.error_codes[0] if reply.error_codes else None) or _status_code(reply.status)
        return LotAnswer(
            transition,
            CallOutcome.REJECTED if rejected else CallOutcome.OK,
            items,
            code=code[:10],
            http_status=reply.http_status,
            error=reply.message or None,
        )

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        return notifies(settings, item)

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> set[str]:
        """Keys of this lot's NFS-e that are, or become, cancelled (one read, only with notes)."""
        cancelled = {item.access_key for item in items if is_registered_cancellation(item)}
        notes = {item.access_key for item in items if item.kind is DocumentKind.NFSE and item.access_key}
        if notes:
            cancelled |= self.ctx.events.keys_with_event(company.id, PRODUCT, notes, CANCELLING_EVENTS)
        return {key for key in cancelled if key}

    def within_lot(self, lot: StoredLot) -> None:
        prepared = lot.prepared if isinstance(lot.prepared, set) else None
        store_nfse_extras(lot.unit, lot.company.id, lot.items, lot.stored, prepared)

    def within_recovery(self, lot: StoredLot) -> None:
        store_nfse_extras(lot.unit, lot.company.id, lot.items, lot.stored)


def store_nfse_extras(
    unit: Unit,
    company_id: int,
    items: Sequence[StoreInput],
    stored: Sequence[Stored],
    cancelled: set[str] | None = None,
) -> None:
    """What an NFS-e lot writes beyond the shared store, in the lot's own transaction: the details
    and delivery flag of each NFS-e that became current, the substitute key of each substitution
    event, and the cancelled status its registered cancellations cause."""
    details: list[tuple[int, NfseDetails]] = []
    substitutes: list[tuple[int, str]] = []
    keys = set(cancelled or ())
    for item, outcome in zip(items, stored, strict=True):
        if isinstance(item, DocumentInput) and item.nfse is not None and isinstance(outcome, StoredDocument):
            if outcome.became_current:
                details.append((outcome.document_id, item.nfse))
        elif isinstance(item, EventInput) and isinstance(outcome, StoredEvent):
            if item.substitute_key and (outcome.created or outcome.replaced):
                substitutes.append((outcome.event_id, item.substitute_key))
            if is_registered_cancellation(item):
                keys.add(item.access_key)
    if details or substitutes:
        unit.save_nfse(details, substitutes)
    if keys:
        unit.mark_cancelled(company_id, PRODUCT, keys)


def _held(state: CaptureState, until: datetime, reason: str) -> CaptureState:
    return waiting(state, until, f"{reason} Nova tentativa às {display_time(until, until)}.")


def _status_code(status: AdnStatus) -> str:
    return {AdnStatus.DOCUMENTS: "200", AdnStatus.NO_DOCUMENTS: "E2220", AdnStatus.REJECTED: "REJEICAO"}[status]
