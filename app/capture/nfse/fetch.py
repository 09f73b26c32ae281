"""NFS-e capture by key on demand (rule book §6.6): the database first, else the Sefin Nacional.

The key is validated (leniently: an alphanumeric CNPJ is accepted, protocol.md §4.8). A document
already stored is answered from the database without any call. Otherwise ``GET /nfse/{chave}``
fetches it and it is stored through the same reader and store input the ADN distribution uses,
without an NSU: when the same NFS-e later arrives by distribution the store recognises it by its
key (no second document; the NSU is recorded on it) and the distribution notifies it then. A
fetch notifies nothing.

Every call is logged (operation ``nfse:{key}``); NT 2018.002's 10 queries of one key per hour
(``app.core.quota``) applies to these queries too, and the answer is archived when it carried the
document or a refusal.

A client of the office's capture node holds no certificate and never queries: its request is
queued (``queue``: a ``gap_recoveries`` row with the key, one per key, asked twice is one query)
and the node makes it (``dispatch``, the recoveries job, at once when the database tells it of the
request); the NFS-e reaches the client's grid like any other. A query unanswered is tried again
with the events' backoff (``app.core.manifestation.event_retry_delay``), then given up.
"""

from __future__ import annotations

import time
from datetime import datetime

from app.capture.context import CaptureContext, CaptureNotice, call_record, outcome_of
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.lookup import ReprocessResult
from app.capture.nfse.adapter import store_nfse_extras
from app.capture.nfse.processing import process_nfse_xml
from app.config.endpoints import Service
from app.core.cadence import display_time
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.keys import NfseKey
from app.core.manifestation import event_retry_delay
from app.core.products import Product
from app.core.quota import QUOTA_WINDOW, key_query_allowed, next_key_query_at
from app.fiscal.errors import CommunicationError
from app.fiscal.sefin import SefinClient
from app.store.records import (
    CallOutcome,
    CaptureSettings,
    Company,
    DocumentInput,
    DocumentKind,
    GapRecovery,
    GapStatus,
    StoredDocument,
)

PRODUCT = Product.NFSE
SERVICE = Service.NFSE_SEFIN


def operation_of(key: str) -> str:
    return f"nfse:{key}"


class NfseFetch:
    """A user's "buscar esta NFS-e pela chave"."""

    def __init__(self, ctx: CaptureContext) -> None:
        self.ctx = ctx

    def queue(self, company_id: int, key: str) -> ReprocessResult:
        """The fetch left to the office's capture node (this workstation holds no certificate)."""
        try:
            chave = NfseKey.parse(key)
        except InvalidIdentifier as error:
            return ReprocessResult("rejected", error.message)
        stored = self.ctx.documents.find(company_id, PRODUCT, chave.value)
        if stored is not None and stored.kind is DocumentKind.NFSE and not stored.quarantined:
            return ReprocessResult("local", "A NFS-e já está na base; nenhuma consulta foi feita.", stored.id)
        new = self.ctx.recoveries.queue_key(company_id, PRODUCT, chave.value)
        already = "" if new else " (já estava agendada: uma consulta só)"
        where = "a estação que captura consulta a Sefin Nacional e a NFS-e aparece aqui"
        return ReprocessResult("deferred", f"Busca agendada{already}: {where}.")

    def next_due_at(self) -> datetime | None:
        return self.ctx.recoveries.next_attempt_at(PRODUCT)

    def dispatch(self, locks: CompanyLocks, limit: int = 100, *, company_id: int | None = None) -> int:
        """Make every due queued fetch once (of one company when given); returns how many queried."""
        now = self.ctx.clock.now()
        tried = 0
        for queued in self.ctx.recoveries.due(now, limit=limit, product=PRODUCT):
            if queued.access_key is None or company_id not in (None, queued.company_id):
                continue
            lock = locks.for_cnpj(self.ctx.companies.get(queued.company_id).cnpj.value)
            if not lock.acquire(blocking=False):
                continue  # its distribution is running: next dispatch
            try:
                result = self.fetch(queued.company_id, queued.access_key)
            finally:
                lock.release()
            self._settle(queued, result)
            tried += result.status in ("fetched", "not_found", "rejected")
        return tried

    def _settle(self, queued: GapRecovery, result: ReprocessResult) -> None:
        recoveries = self.ctx.recoveries
        if result.status in ("local", "fetched"):
            recoveries.update(queued.id, status=GapStatus.RECOVERED, last_error=None)
            return
        if result.status == "deferred":  # the key's quota: not an attempt, it waits for its slot
            retry = result.available_at or self.ctx.clock.now()
            recoveries.update(queued.id, status=GapStatus.PENDING, next_attempt_at=retry, count_attempt=False)
            return
        delay = event_retry_delay(queued.attempts + 1) if result.unanswered else None
        if delay is not None:
            retry = self.ctx.clock.now() + delay
            recoveries.update(queued.id, status=GapStatus.PENDING, next_attempt_at=retry, last_error=result.message)
            return
        status = GapStatus.NOT_FOUND if result.status == "not_found" else GapStatus.ABANDONED
        recoveries.update(queued.id, status=status, last_error=result.message)
        self.ctx.notify(CaptureNotice("recovery", queued.company_id, PRODUCT, result.message))

    def fetch(self, company_id: int, key: str) -> ReprocessResult:
        company = self.ctx.companies.get(company_id)
        try:
            chave = NfseKey.parse(key)
        except InvalidIdentifier as error:
            return ReprocessResult("rejected", error.message)
        stored = self.ctx.documents.find(company.id, PRODUCT, chave.value)
        if stored is not None and stored.kind is DocumentKind.NFSE and not stored.quarantined:
            return ReprocessResult("local", "A NFS-e já está na base; nenhuma consulta foi feita.", stored.id)
        now = self.ctx.clock.now()
        times = [c.at for c in self.ctx.audit.calls_for(SERVICE.value, operation_of(chave.value), now - QUOTA_WINDOW)]
        if not key_query_allowed(times, now):
            when = next_key_query_at(times, now)
            return ReprocessResult(
                "deferred",
                "Esta chave já foi consultada 10 vezes na última hora (NT 2018.002). "
                f"Consulta disponível a partir de {display_time(when, now)}.",
                available_at=when,
            )
        settings = self.ctx.companies.get_settings(company.id, PRODUCT)
        if settings is None:
            return ReprocessResult("rejected", "A captura de NFS-e não está configurada para esta empresa.")
        try:
            a1 = self.ctx.certificates.get(company, now)
        except CapturaError as error:
            return ReprocessResult("rejected", f"NFS-e não consultada: {error.message}")
        client = SefinClient.from_factory(self.ctx.http, a1, settings.environment)
        return self._query(company, settings, chave, client, now)

    def _query(
        self, company: Company, settings: CaptureSettings, chave: NfseKey, client: SefinClient, at: datetime
    ) -> ReprocessResult:
        operation = operation_of(chave.value)
        started = time.monotonic()
        try:
            answer = client.get_nfse(chave)
        except CommunicationError as error:
            record = call_record(
                SERVICE, PRODUCT, company.id, operation, at, started, outcome_of(error), error=error.message
            )
            self.ctx.audit.log_call(record)
            return ReprocessResult("rejected", f"NFS-e não consultada: {error.message}", unanswered=True)
        outcome = CallOutcome.OK if answer.ok else CallOutcome.REJECTED
        record = call_record(
            SERVICE, PRODUCT, company.id, operation, at, started, outcome, cstat=answer.code, http_status=answer.status
        )
        call_id = self.ctx.audit.log_call(record)
        reply = answer.reply
        if answer.xml is None:
            with self.ctx.unit() as unit:
                unit.archive(SERVICE.value, company.id, call_id, reply.request_bytes, reply.response_bytes)
            if answer.status == 404:
                return ReprocessResult("not_found", f"NFS-e não encontrada na Sefin Nacional ({answer.message}).")
            return ReprocessResult("rejected", f"A Sefin Nacional recusou a consulta ({answer.message}).")
        item = process_nfse_xml(company.cnpj, answer.xml, None, settings)
        with self.ctx.unit() as unit:  # the document, its details and its archived answer, together
            unit.archive(SERVICE.value, company.id, call_id, reply.request_bytes, reply.response_bytes)
            stored = unit.store_lot(company.id, [item])
            store_nfse_extras(unit, company.id, [item], stored)
        if not isinstance(item, DocumentInput) or not isinstance(stored[0], StoredDocument):
            return ReprocessResult("rejected", "A Sefin Nacional respondeu com um evento em vez da NFS-e.")
        if item.parse_error:
            return ReprocessResult(
                "rejected", f"NFS-e obtida da Sefin Nacional mas ilegível, guardada em quarentena: {item.parse_error}"
            )
        return ReprocessResult("fetched", "NFS-e obtida da Sefin Nacional e guardada.", stored[0].document_id)
