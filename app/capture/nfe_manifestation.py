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
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.capture.context import CaptureContext, CaptureNotice, outcome_of
from app.capture.nfe_engine import PRODUCT
from app.config.endpoints import Service
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.guard import CONSERVATIVE_EVENT_LIMIT, GUARD_WINDOW, EventAttempt, GuardStatus, attempt_status
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
from app.fiscal.errors import CommunicationError, RequestInvalid
from app.fiscal.mde import ManifestationClient, prepare_event, proc_evento_nfe
from app.store.records import (
    CallOutcome,
    Company,
    DocumentKind,
    EventInput,
    Manifestation,
    ManifestationStatus,
)

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
        history = [EventAttempt(c.at, int(c.cstat) if c.cstat and c.cstat.isdigit() else None) for c in calls]
        # The sandbox referee, like a strict SEFAZ, counts any repeated rejected event: resend none.
        return attempt_status(history, now, limit=CONSERVATIVE_EVENT_LIMIT, identical_only=False)

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
        return self.ctx.manifestations.next_not_before()

    def dispatch(self, limit: int = 50, *, company_id: int | None = None) -> int:
        """Send every due request (of one company when given); returns how many were sent."""
        sent = 0
        due = self.ctx.manifestations.due(self.ctx.clock.now(), limit=limit if company_id is None else 10_000)
        for request in due:
            if company_id is not None and request.company_id != company_id:
                continue
            if self._send(request):
                sent += 1
        return sent

    def _send(self, request: Manifestation) -> bool:
        company = self.ctx.companies.get(request.company_id)
        settings = self.ctx.companies.get_settings(company.id, PRODUCT)
        now = self.ctx.clock.now()
        if request.automatic:
            others = self.ctx.manifestations.for_key(company.id, PRODUCT, request.access_key)
            accepted = [m.tp_evento for m in others if m.status is ManifestationStatus.ACCEPTED]
            pending_other = any(
                m.id != request.id and m.tp_evento == CIENCIA and m.status is not ManifestationStatus.REJECTED
                for m in others
            )
            verdict = should_send_auto_ciencia(
                bool(settings and settings.auto_ciencia and settings.enabled), accepted, pending_other
            )
            if not verdict:
                self.ctx.manifestations.settle(
                    request.id, ManifestationStatus.REJECTED, cstat=None, x_motivo=f"Não enviada: {verdict.reason}"
                )
                return False
        guard = self.attempts(company, request.access_key, request.tp_evento, request.n_seq_evento, now)
        if not guard.allowed:
            assert guard.retry_at is not None
            self.ctx.manifestations.settle(
                request.id,
                ManifestationStatus.PENDING,
                cstat=request.cstat,
                x_motivo=guard.text,
                retry_at=guard.retry_at,
            )
            return False
        environment = settings.environment if settings else None
        if environment is None:
            return False
        try:
            a1 = self.ctx.certificates.get(company, now)
            signed = prepare_event(
                a1,
                request.access_key,
                request.tp_evento,
                company.cnpj,
                request.n_seq_evento,
                now,
                environment,
                request.justification,
            )
        except CapturaError as error:
            # Certificate unusable or an event the layout refuses (alphanumeric CNPJ): not sendable.
            self.ctx.manifestations.settle(request.id, ManifestationStatus.REJECTED, cstat=None, x_motivo=error.message)
            self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, error.message))
            return False
        self.ctx.manifestations.mark_sent(request.id)
        operation = event_id(request.tp_evento, request.access_key, request.n_seq_evento)
        started = time.monotonic()
        try:
            client = ManifestationClient.from_factory(self.ctx.http, a1, environment)
            reply = client.send([signed], id_lote=int(now.timestamp() * 1000) % 10**15)
        except (CommunicationError, RequestInvalid) as error:
            if isinstance(error, CommunicationError):  # a refusal before sending is no government call
                self.ctx.log_call(
                    SERVICE,
                    PRODUCT,
                    company.id,
                    operation,
                    now,
                    started,
                    outcome_of(error),
                    cstat=None,
                    error=error.message,
                )
            delay = event_retry_delay(request.attempts + 1)
            if delay is None or isinstance(error, RequestInvalid):
                self.ctx.manifestations.settle(
                    request.id, ManifestationStatus.REJECTED, cstat=None, x_motivo=error.message
                )
            else:
                self.ctx.manifestations.settle(
                    request.id,
                    ManifestationStatus.PENDING,
                    cstat=None,
                    x_motivo=error.message,
                    retry_at=self.ctx.clock.now() + delay,
                )
            return True
        result = reply.result_for(request.access_key, request.tp_evento, request.n_seq_evento)
        judged = classify_event_result(
            result.cstat if result else None,
            result.xmotivo if result else reply.lot_xmotivo,
            lot_cstat=reply.lot_cstat,
        )
        cstat = str(judged.cstat) if judged.cstat is not None else None
        outcome = CallOutcome.OK if judged.success else CallOutcome.REJECTED
        call_id = self.ctx.log_call(
            SERVICE, PRODUCT, company.id, operation, now, started, outcome, cstat=cstat, error=None
        )
        self.ctx.archive(SERVICE, company.id, call_id, reply.request_bytes, reply.response_bytes)
        if judged.outcome is EventOutcome.RETRY:
            delay = event_retry_delay(request.attempts + 1) or timedelta(minutes=30)
            self.ctx.manifestations.settle(
                request.id,
                ManifestationStatus.PENDING,
                cstat=cstat,
                x_motivo=judged.reason,
                retry_at=self.ctx.clock.now() + delay,
            )
            return True
        if not judged.success:
            self.ctx.manifestations.settle(
                request.id, ManifestationStatus.REJECTED, cstat=cstat, x_motivo=judged.reason
            )
            self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, judged.reason))
            return True
        proc: bytes | None = None
        if result is not None and result.protocol and result.ret_evento_bytes:
            proc = proc_evento_nfe(signed, result.ret_evento_bytes)
            self.ctx.documents.store_batch(
                company.id,
                [
                    EventInput(
                        product=PRODUCT,
                        kind=DocumentKind.PROC_EVENTO_NFE,
                        xml=proc,
                        access_key=request.access_key,
                        tp_evento=request.tp_evento,
                        n_seq_evento=request.n_seq_evento,
                        description=manifestation_type(request.tp_evento).desc_evento,
                        protocol=result.protocol,
                        event_at=now,
                        cstat=cstat,
                        author_id=company.cnpj.value,
                    )
                ],
            )
        self.ctx.manifestations.settle(
            request.id,
            ManifestationStatus.ACCEPTED,
            cstat=cstat,
            x_motivo=judged.reason,
            protocol=result.protocol if result else None,
            result_xml=proc,
        )
        label = manifestation_type(request.tp_evento).label
        self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, f"{label} registrada ({judged.reason})."))
        return True
