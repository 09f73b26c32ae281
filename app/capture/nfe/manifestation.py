"""Recipient manifestation of NF-e (rule book §4.5): requests, automatic Ciência, dispatch.

A request is asynchronous: it is stored pending and the dispatcher sends it when due. The
automatic Ciência is re-checked just before sending (still enabled, no accepted conclusive event
for the key, at most one per key). Results: 135/136 and 573 are success, any other cStat ends the
request as rejected with its reason, communication failures are retried with a backoff. NT
2018.002 (seed 004): an event the service rejected is not sent again within the hour; the user
is told "X de N tentativas" and when it can be tried again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime

from app.capture.context import CaptureContext, CaptureNotice, call_record, outcome_of
from app.capture.engine import inputs
from app.capture.engine.sends import settle_unanswered, settle_unsent
from app.config.endpoints import Service
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.guard import GUARD_WINDOW, EventAttempt, GuardStatus, logged_attempt, resend_status
from app.core.keys import AccessKey
from app.core.manifestation import (
    CIENCIA,
    CONCLUSIVE_TYPES,
    EventOutcome,
    classify_event_result,
    deadline,
    event_id,
    event_retry_delay,
    manifestation_type,
    next_seq,
    should_send_auto_ciencia,
    validate_justification,
)
from app.core.products import Product
from app.core.retries import EVENT_SEND
from app.documents.model import EventMeta
from app.documents.nfe import read_nfe_document
from app.fiscal.errors import CommunicationError, RequestInvalid
from app.fiscal.mde import ManifestationClient, build_event, prepare_event, proc_evento_nfe
from app.store.records import (
    CallOutcome,
    CaptureSettings,
    Company,
    EventInput,
    Manifestation,
    ManifestationStatus,
)

PRODUCT = Product.NFE
SERVICE = Service.NFE_RECEPCAO_EVENTO


class ManifestationRefused(CapturaError):
    """The request cannot be made now; the message says why and, if it applies, until when."""


@dataclass(frozen=True, slots=True)
class ManifestationView:
    """A request as the UI shows it: status, deadline and the NT 2018.002 attempts line."""

    request: Manifestation
    label: str
    deadline: datetime | None
    attempts: GuardStatus


class NfeManifestationService:
    def __init__(self, ctx: CaptureContext) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ requests

    def request(self, company_id: int, key: str, tp_evento: str, justification: str | None = None) -> Manifestation:
        """A user's manifestation (210200, 210210, 210220, 210240); raises ManifestationRefused."""
        company = self.ctx.companies.get(company_id)
        kind = manifestation_type(tp_evento)
        try:
            access_key = AccessKey.parse(key)
        except InvalidIdentifier as error:
            raise ManifestationRefused(error.message) from error
        text = validate_justification(tp_evento, justification)
        now = self.ctx.clock.now()
        existing = self.ctx.manifestations.for_key(company_id, PRODUCT, access_key.value)
        same_type = [m for m in existing if m.tp_evento == tp_evento]
        in_flight = [m for m in same_type if m.status in (ManifestationStatus.PENDING, ManifestationStatus.SENT)]
        if in_flight:
            return in_flight[0]
        registered = [m.n_seq_evento for m in same_type if m.status is ManifestationStatus.ACCEPTED]
        if registered and tp_evento not in CONCLUSIVE_TYPES:
            raise ManifestationRefused(f"{kind.label} já registrada para esta nota.")
        try:
            seq = next_seq(tp_evento, registered)
        except CapturaError as error:
            raise ManifestationRefused(error.message) from error
        guard = self.attempts(company, access_key.value, tp_evento, seq, now)
        if not guard.allowed:
            raise ManifestationRefused(
                f"{kind.label} rejeitada pela SEFAZ na última hora ({guard.text}). "
                "Confira o motivo da rejeição antes de tentar de novo."
            )
        rejected = [m for m in same_type if m.n_seq_evento == seq and m.status is ManifestationStatus.REJECTED]
        if rejected:
            return self.ctx.manifestations.reopen(rejected[0].id, now, text)
        return self.ctx.manifestations.request(
            company_id, PRODUCT, access_key.value, tp_evento, not_before=now, n_seq_evento=seq, justification=text
        )

    def attempts(self, company: Company, key: str, tp_evento: str, seq: int, now: datetime) -> GuardStatus:
        """NT 2018.002: this event's sends in the last hour, from the call log."""
        calls = self.ctx.audit.calls_for(SERVICE.value, event_id(tp_evento, key, seq), now - GUARD_WINDOW)
        return resend_status([logged_attempt(c.at, c.cstat) for c in calls], now)

    def view(self, company_id: int, key: str) -> list[ManifestationView]:
        company = self.ctx.companies.get(company_id)
        now = self.ctx.clock.now()
        summary = self.ctx.documents.find(company_id, PRODUCT, key)
        views = []
        for m in self.ctx.manifestations.for_key(company_id, PRODUCT, key):
            due = deadline(m.tp_evento, summary.issued_at) if summary and summary.issued_at else None
            views.append(
                ManifestationView(
                    m,
                    manifestation_type(m.tp_evento).label,
                    due,
                    self.attempts(company, key, m.tp_evento, m.n_seq_evento, now),
                )
            )
        return views

    # ------------------------------------------------------------------ dispatch

    def next_due_at(self) -> datetime | None:
        return self.ctx.manifestations.next_not_before(PRODUCT)

    def dispatch(self, limit: int = 50, *, company_id: int | None = None) -> int:
        """Send every due request (of one company when given); returns how many were sent."""
        due = self.ctx.manifestations.due(
            self.ctx.clock.now(), limit=limit if company_id is None else 10_000, company_id=company_id, product=PRODUCT
        )
        if not due:
            return 0
        batch = _Pass.read(self.ctx, due)
        return sum(1 for request in due if self._send(request, batch))

    def _send(self, request: Manifestation, batch: _Pass) -> bool:
        company, settings = batch.company(request.company_id)
        now = self.ctx.clock.now()
        if request.automatic:
            others = batch.others.get((company.id, request.access_key), [])
            accepted = [m.tp_evento for m in others if m.status is ManifestationStatus.ACCEPTED]
            pending_other = any(
                m.id != request.id and m.tp_evento == CIENCIA and m.status is not ManifestationStatus.REJECTED
                for m in others
            )
            verdict = should_send_auto_ciencia(
                bool(settings and settings.auto_ciencia and settings.enabled), accepted, pending_other
            )
            if not verdict:
                refused = f"Não enviada: {verdict.reason}"
                batch.settled(
                    request,
                    settle_unsent(self.ctx, request, ManifestationStatus.REJECTED, cstat=None, x_motivo=refused),
                )
                return False
        operation = event_id(request.tp_evento, request.access_key, request.n_seq_evento)
        guard = resend_status(batch.history(operation, now), now)
        if not guard.allowed:
            assert guard.retry_at is not None
            waiting = settle_unsent(
                self.ctx,
                request,
                ManifestationStatus.PENDING,
                cstat=request.cstat,
                x_motivo=guard.text,
                retry_at=guard.retry_at,
            )
            batch.settled(request, waiting)
            return False
        environment = settings.environment if settings else None
        if environment is None:
            return False
        try:
            a1 = self.ctx.certificates.get(company, now)
            evento = build_event(
                request.access_key,
                request.tp_evento,
                company.cnpj,
                request.n_seq_evento,
                now,
                environment,
                request.justification,
            )
            signed = prepare_event(a1, evento)
        except CapturaError as error:
            # Certificate unusable or an event the layout refuses (alphanumeric CNPJ): not sendable.
            batch.settled(
                request,
                settle_unsent(self.ctx, request, ManifestationStatus.REJECTED, cstat=None, x_motivo=error.message),
            )
            self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, error.message))
            return False
        # Committed before the call: a crash leaves it 'sent', and reclaim_sent sends it again.
        if not self.ctx.manifestations.claim(request.id):
            return False  # no longer pending (another pass took it)
        started = time.monotonic()
        try:
            client = ManifestationClient.from_factory(self.ctx.http, a1, environment)
            reply = client.send([signed], id_lote=int(now.timestamp() * 1000) % 10**15)
        except (CommunicationError, RequestInvalid) as error:
            self._failed(batch, request, company, operation, now, started, error)
            return True
        result = reply.result_for(request.access_key, request.tp_evento, request.n_seq_evento)
        judged = classify_event_result(
            result.cstat if result else None,
            result.xmotivo if result else reply.lot_xmotivo,
            lot_cstat=reply.lot_cstat,
        )
        cstat = str(judged.cstat) if judged.cstat is not None else None
        # The answer is on record at once, in its own commit: if the process dies before the rest
        # lands (or the procEventoNFe fails its schema), the NT 2018.002 guard still knows this
        # send and its cStat; a crash test caught the same event sent twice more without it.
        outcome = CallOutcome.OK if judged.success else CallOutcome.REJECTED
        call_id = self.ctx.audit.log_call(
            call_record(SERVICE, PRODUCT, company.id, operation, now, started, outcome, cstat=cstat)
        )
        retry_at: datetime | None = None
        proc: bytes | None = None
        protocol: str | None = None
        if judged.outcome is EventOutcome.RETRY:
            status = ManifestationStatus.PENDING
            retry_at = self.ctx.clock.now() + (event_retry_delay(request.attempts + 1) or EVENT_SEND.cap)
        elif not judged.success:
            status = ManifestationStatus.REJECTED
        else:
            status = ManifestationStatus.ACCEPTED
            protocol = result.protocol if result else None
            if result is not None and result.protocol and result.ret_evento_bytes:
                proc = proc_evento_nfe(signed, result.ret_evento_bytes)
        event = self._proc_event(proc, now) if proc is not None else None  # read outside the write lock
        # The rest of the answer in one transaction: archive, procEventoNFe and the request.
        with self.ctx.unit() as unit:
            unit.archive(SERVICE.value, company.id, call_id, reply.request_bytes, reply.response_bytes)
            if event is not None:
                unit.store_lot(company.id, [event])
            unit.settle_manifestation(
                request.id,
                status,
                cstat=cstat,
                x_motivo=judged.reason,
                protocol=protocol,
                result_xml=proc,
                retry_at=retry_at,
            )
        batch.settled(request, status)
        batch.called(operation, now, cstat)
        if status is ManifestationStatus.REJECTED:
            self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, judged.reason))
        elif status is ManifestationStatus.ACCEPTED:
            label = manifestation_type(request.tp_evento).label
            message = f"{label} registrada ({judged.reason})."
            self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, message))
        return True

    def _failed(
        self,
        batch: _Pass,
        request: Manifestation,
        company: Company,
        operation: str,
        now: datetime,
        started: float,
        error: CommunicationError | RequestInvalid,
    ) -> None:
        """No answer (retried with a backoff) or a lot refused before sending (rejected)."""
        with self.ctx.unit() as unit:
            if isinstance(error, CommunicationError):  # a refusal before sending is no government call
                record = call_record(
                    SERVICE, PRODUCT, company.id, operation, now, started, outcome_of(error), error=error.message
                )
                unit.log_call(record)
            retryable = not isinstance(error, RequestInvalid)
            status = settle_unanswered(unit, request, error.message, self.ctx.clock.now(), retryable=retryable)
        batch.settled(request, status)
        if isinstance(error, CommunicationError):
            batch.called(operation, now, None)

    @staticmethod
    def _proc_event(proc: bytes, now: datetime) -> EventInput:
        """The registered manifestation as a distributed procEventoNFe is stored: read by the
        NF-e reader; its instant is the ``dhEvento`` it was sent with."""
        meta = read_nfe_document(proc)
        if not isinstance(meta, EventMeta):
            raise CapturaError("O procEventoNFe montado não foi lido como evento.")
        return inputs.event(PRODUCT, meta, proc, None, None, None, event_at=now)


class _Pass:
    """What a dispatch pass reads once for all its due requests, kept current as it sends them.

    The companies' settings are checked at each send (the enabled snapshot); the other requests
    of each automatic Ciência's key and the NT 2018.002 history of every event are one read each.
    Passes run one at a time (the scheduler's routine thread), so what changes during a pass is
    what the pass itself settles and logs.
    """

    def __init__(
        self,
        ctx: CaptureContext,
        others: dict[tuple[int, str], list[Manifestation]],
        calls: dict[str, list[EventAttempt]],
    ) -> None:
        self._ctx = ctx
        self.others = others
        self._calls = calls

    @classmethod
    def read(cls, ctx: CaptureContext, due: list[Manifestation]) -> _Pass:
        since = ctx.clock.now() - GUARD_WINDOW
        automatic = [(m.company_id, m.access_key) for m in due if m.automatic]
        operations = {event_id(m.tp_evento, m.access_key, m.n_seq_evento) for m in due}
        logged = ctx.manifestations.event_calls(SERVICE.value, operations, since)
        calls = {op: [logged_attempt(at, cstat) for at, cstat in found] for op, found in logged.items()}
        return cls(ctx, ctx.manifestations.for_keys(PRODUCT, automatic), calls)

    def company(self, company_id: int) -> tuple[Company, CaptureSettings | None]:
        """The company and its NF-e settings as they are at this send (the rule book checks the
        automatic Ciência again at the moment of sending; another process may have changed it):
        the engines' enabled snapshot, whose one-statement check sees any change. A company
        disabled since still gets its manual requests sent."""
        found = self._ctx.companies.enabled_configuration(PRODUCT, company_id)
        if found is not None:
            return found
        return self._ctx.companies.get(company_id), self._ctx.companies.get_settings(company_id, PRODUCT)

    def history(self, operation: str, now: datetime) -> list[EventAttempt]:
        """This event's sends within the guard window before ``now``."""
        since = now - GUARD_WINDOW
        return [attempt for attempt in self._calls.get(operation, ()) if attempt.at >= since]

    def settled(self, request: Manifestation, status: ManifestationStatus) -> None:
        mine = self.others.get((request.company_id, request.access_key))
        if mine is not None:
            self.others[(request.company_id, request.access_key)] = [
                replace(m, status=status) if m.id == request.id else m for m in mine
            ]

    def called(self, operation: str, at: datetime, cstat: str | None) -> None:
        self._calls.setdefault(operation, []).append(logged_attempt(at, cstat))
