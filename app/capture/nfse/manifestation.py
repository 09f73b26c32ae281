"""NFS-e taker manifestation (rule book §6.5): Confirmação (203202) and Rejeição do Tomador (203206).

Never automatic: a request exists only because a user asked (:meth:`request`, which the desk's
``app.desk.manifesting`` calls for the window and the command line). Before anything is recorded
it is refused, with the reason, when the NFS-e is not in the database, is the company's own (it is
the prestador), the company is not its taker, or the certificate's CNPJ is not the taker's. A
request is asynchronous: stored pending and sent by :meth:`dispatch` (the scheduler's
manifestation job, or the desk at once).

Sending: the ``pedRegEvento`` (Id "PRE" + key + code) signed with the company's A1 goes to the
Sefin Nacional; 201 registers it (the returned ``evento`` is stored as the key's event through the
NFS-e reader, so it links to its NFS-e and the later ADN copy is recognised), a 4xx ends the
request rejected with Sefin's code and reason, no answer (5xx, timeout) is sent again with the
NF-e events' backoff. Every call is logged with the pedido's Id as its operation: the seed-004
guard (``app.core.guard.resend_status``) reads that log, so a rejected pedido is not sent again
within the hour of its rejection, and the user sees "X de N tentativas".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from app.capture.context import CaptureContext, CaptureNotice, call_record, outcome_of
from app.capture.engine.sends import settle_unanswered, settle_unsent
from app.capture.nfse.adapter import store_nfse_extras
from app.capture.nfse.processing import process_nfse_xml
from app.certs.a1 import A1Certificate
from app.config.endpoints import Service
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.guard import GUARD_WINDOW, GuardStatus, logged_attempt, resend_status
from app.core.keys import NfseKey
from app.core.products import Product
from app.core.taker import (
    TAKER_TYPES,
    RejectionReason,
    SefinOutcome,
    judge_event_answer,
    ped_reg_id,
    read_reason,
    refusal,
    stored_reason,
    taker_type,
    validate_reason,
)
from app.fiscal.errors import CommunicationError, RequestInvalid
from app.fiscal.sefin import SefinAnswer, SefinClient, build_ped_reg_evento, prepare_ped_reg_evento
from app.store.records import CallOutcome, Company, EventInput, Manifestation, ManifestationStatus, PartyRole

PRODUCT = Product.NFSE
SERVICE = Service.NFSE_SEFIN
_IN_FLIGHT = (ManifestationStatus.PENDING, ManifestationStatus.SENT)


class TakerManifestationRefused(CapturaError):
    """The request cannot be made; the message says why (and until when, if it applies)."""


@dataclass(frozen=True, slots=True)
class TakerManifestationView:
    """A request as the window shows it: its label, the rejection reason sent, the attempts line."""

    request: Manifestation
    label: str
    reason: RejectionReason | None
    attempts: GuardStatus


class NfseManifestationService:
    """Satisfies ``app.capture.products.Dispatcher`` for the NFS-e taker events."""

    def __init__(self, ctx: CaptureContext) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ requests

    def request(
        self,
        company_id: int,
        key: str,
        tp_evento: str,
        reason_code: str | None = None,
        reason: str | None = None,
        *,
        certificate_here: bool = True,
    ) -> Manifestation:
        """Queue a user's taker manifestation; raises :class:`TakerManifestationRefused` with the reason.
        ``certificate_here`` False: a client of the office's capture node, which holds no certificate:
        the company's registered certificate is checked instead, the node checks its own when it sends."""
        company = self.ctx.companies.get(company_id)
        try:
            chave = NfseKey.parse(key).value
            kind = taker_type(tp_evento)
            motive = validate_reason(tp_evento, reason_code, reason)
        except (InvalidIdentifier, CapturaError) as error:
            raise TakerManifestationRefused(error.message) from error
        now = self.ctx.clock.now()
        problem = self._refusal(company, chave, now, certificate_here=certificate_here)
        if problem is not None:
            raise TakerManifestationRefused(f"{kind.label} não enviada: {problem}")
        existing = self.ctx.manifestations.for_key(company_id, PRODUCT, chave)
        taker_requests = [m for m in existing if m.tp_evento in TAKER_TYPES]
        for m in taker_requests:
            if m.status in _IN_FLIGHT and m.tp_evento == tp_evento:
                return m
            if m.status in _IN_FLIGHT or m.status is ManifestationStatus.ACCEPTED:
                other = taker_type(m.tp_evento).label
                state = "registrada" if m.status is ManifestationStatus.ACCEPTED else "pendente"
                # Sefin accepts one Confirmação OR one Rejeição per taker (E1833).
                raise TakerManifestationRefused(f"{other} já {state} para esta NFS-e: só uma manifestação do tomador.")
        guard = self.attempts(chave, tp_evento, now)
        if not guard.allowed:
            raise TakerManifestationRefused(
                f"{kind.label} rejeitada pela Sefin Nacional na última hora ({guard.text}). "
                "Confira o motivo da rejeição antes de tentar de novo."
            )
        text = stored_reason(motive)
        rejected = [m for m in taker_requests if m.tp_evento == tp_evento]
        if rejected:  # the one row of this event (the store's unique key): asked again
            return self.ctx.manifestations.reopen(rejected[0].id, now, text)
        return self.ctx.manifestations.request(
            company_id, PRODUCT, chave, tp_evento, not_before=now, n_seq_evento=1, justification=text
        )

    def attempts(self, key: str, tp_evento: str, now: datetime) -> GuardStatus:
        """Seed 004: this pedido's sends in the last hour, from the call log."""
        calls = self.ctx.audit.calls_for(SERVICE.value, ped_reg_id(key, tp_evento), now - GUARD_WINDOW)
        return resend_status([logged_attempt(c.at, c.cstat) for c in calls], now)

    def view(self, company_id: int, key: str) -> list[TakerManifestationView]:
        now = self.ctx.clock.now()
        return [
            TakerManifestationView(
                m, taker_type(m.tp_evento).label, read_reason(m.justification), self.attempts(key, m.tp_evento, now)
            )
            for m in self.ctx.manifestations.for_key(company_id, PRODUCT, key)
            if m.tp_evento in TAKER_TYPES
        ]

    def _refusal(
        self,
        company: Company,
        key: str,
        now: datetime,
        a1: A1Certificate | None = None,
        *,
        certificate_here: bool = True,
    ) -> str | None:
        """Why this company may not manifest this NFS-e now (before anything is signed), or None."""
        summary = self.ctx.documents.find(company.id, PRODUCT, key)
        if summary is None:
            return "a NFS-e não está na base desta empresa; busque-a antes pela chave (documents fetch)."
        holder = company.certificate_ref  # whose certificate the office registered for the company
        if certificate_here:
            try:
                holder = (a1 or self.ctx.certificates.get(company, now)).holder_id
            except CapturaError as error:
                return error.message
        parties = self.ctx.documents.parties(summary.id)
        emitter = next((p.tax_id for p in parties if p.role is PartyRole.EMITTER), None)
        taker = next((p.tax_id for p in parties if p.role is PartyRole.TAKER), None)
        return refusal(company.cnpj.value, holder, emitter, taker)

    # ------------------------------------------------------------------ dispatch

    def next_due_at(self) -> datetime | None:
        return self.ctx.manifestations.next_not_before(PRODUCT)

    def dispatch(self, limit: int = 50, *, company_id: int | None = None) -> int:
        """Send every due taker request (of one company when given); returns how many were sent."""
        now = self.ctx.clock.now()
        due = self.ctx.manifestations.due(
            now, limit=limit if company_id is None else 10_000, company_id=company_id, product=PRODUCT
        )
        return sum(1 for request in due if self._send(request))

    def _send(self, request: Manifestation) -> bool:
        company = self.ctx.companies.get(request.company_id)
        now = self.ctx.clock.now()
        operation = ped_reg_id(request.access_key, request.tp_evento)
        guard = self.attempts(request.access_key, request.tp_evento, now)
        if not guard.allowed:
            assert guard.retry_at is not None
            settle_unsent(
                self.ctx, request, ManifestationStatus.PENDING, cstat=None, x_motivo=guard.text, retry_at=guard.retry_at
            )
            return False
        settings = self.ctx.companies.get_settings(company.id, PRODUCT)
        label = taker_type(request.tp_evento).label
        try:
            if settings is None:
                raise CapturaError("a captura de NFS-e não está configurada para esta empresa (ambiente desconhecido).")
            a1 = self.ctx.certificates.get(company, now)
            problem = self._refusal(company, request.access_key, now, a1)  # checked again at the moment of sending
            if problem is not None:
                raise CapturaError(problem)
            reason = read_reason(request.justification)
            unsigned = build_ped_reg_evento(
                request.access_key, request.tp_evento, company.cnpj, now, settings.environment, reason
            )
            signed = prepare_ped_reg_evento(a1, unsigned)
        except CapturaError as error:  # refused before sending: no government call, nothing to guard
            settle_unsent(self.ctx, request, ManifestationStatus.REJECTED, cstat=None, x_motivo=error.message)
            self.ctx.notify(
                CaptureNotice("manifestation", company.id, PRODUCT, f"{label} não enviada: {error.message}")
            )
            return False
        if not self.ctx.manifestations.claim(request.id):
            return False  # another pass took it
        started = time.monotonic()
        try:
            client = SefinClient.from_factory(self.ctx.http, a1, settings.environment)
            answer = client.register_event(NfseKey(request.access_key), signed)
        except RequestInvalid as error:
            settle_unsent(self.ctx, request, ManifestationStatus.REJECTED, cstat=None, x_motivo=error.message)
            return True
        except CommunicationError as error:
            self._unanswered(_Send(request, company, operation, now, started), error)
            return True
        self._answered(_Send(request, company, operation, now, started), answer, label)
        return True

    def _answered(self, send: _Send, answer: SefinAnswer, label: str) -> None:
        request, company = send.request, send.company
        verdict = judge_event_answer(answer.status, answer.code, answer.message)
        accepted = verdict.outcome is SefinOutcome.ACCEPTED
        record = call_record(
            SERVICE,
            PRODUCT,
            company.id,
            send.operation,
            send.at,
            send.started,
            CallOutcome.OK if accepted else CallOutcome.REJECTED,
            cstat=verdict.code,
            http_status=answer.status,
        )
        # On record at once, in its own commit: the seed-004 guard knows this send even if the rest fails.
        call_id = self.ctx.audit.log_call(record)
        event = self._event(company, answer) if accepted else None
        reason = verdict.reason
        with self.ctx.unit() as unit:
            unit.archive(SERVICE.value, company.id, call_id, answer.reply.request_bytes, answer.reply.response_bytes)
            if event is not None:  # linked to its NFS-e as a distributed event is (and its effects)
                store_nfse_extras(unit, company.id, [event], unit.store_lot(company.id, [event]))
            status = ManifestationStatus.ACCEPTED if accepted else ManifestationStatus.REJECTED
            unit.settle_manifestation(
                request.id, status, cstat=verdict.code, x_motivo=reason, result_xml=answer.xml if accepted else None
            )
        message = f"{label} registrada na Sefin Nacional." if accepted else f"{label} rejeitada: {reason}"
        self.ctx.notify(CaptureNotice("manifestation", company.id, PRODUCT, message))

    def _event(self, company: Company, answer: SefinAnswer) -> EventInput | None:
        """The registered evento as the key's event (the reader's store input, as distribution's)."""
        assert answer.xml is not None
        item = process_nfse_xml(company.cnpj, answer.xml, None, self.ctx.companies.get_settings(company.id, PRODUCT))
        return item if isinstance(item, EventInput) else None

    def _unanswered(self, send: _Send, error: CommunicationError) -> None:
        """No answer: sent again later with a backoff, until the sends are exhausted."""
        outcome = outcome_of(error)
        record = call_record(
            SERVICE, PRODUCT, send.company.id, send.operation, send.at, send.started, outcome, error=error.message
        )
        with self.ctx.unit() as unit:
            unit.log_call(record)
            settle_unanswered(unit, send.request, error.message, self.ctx.clock.now(), retryable=error.retryable)


@dataclass(frozen=True, slots=True)
class _Send:
    """One pedido sent to Sefin: what the call's record and the request's settling need."""

    request: Manifestation
    company: Company
    operation: str
    at: datetime
    started: float


__all__ = [
    "PRODUCT",
    "SERVICE",
    "NfseManifestationService",
    "TakerManifestationRefused",
    "TakerManifestationView",
]
