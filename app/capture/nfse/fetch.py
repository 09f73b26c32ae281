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
"""

from __future__ import annotations

import time
from datetime import datetime

from app.capture.context import CaptureContext, call_record, outcome_of
from app.capture.engine.lookup import ReprocessResult
from app.capture.nfse.adapter import store_nfse_extras
from app.capture.nfse.processing import process_nfse_xml
from app.config.endpoints import Service
from app.core.cadence import display_time
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.keys import NfseKey
from app.core.products import Product
from app.core.quota import QUOTA_WINDOW, key_query_allowed, next_key_query_at
from app.fiscal.errors import CommunicationError
from app.fiscal.sefin import SefinClient
from app.store.records import CallOutcome, CaptureSettings, Company, DocumentInput, DocumentKind, StoredDocument

PRODUCT = Product.NFSE
SERVICE = Service.NFSE_SEFIN


def operation_of(key: str) -> str:
    return f"nfse:{key}"


class NfseFetch:
    """A user's "buscar esta NFS-e pela chave"."""

    def __init__(self, ctx: CaptureContext) -> None:
        self.ctx = ctx

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
            return ReprocessResult("rejected", f"NFS-e não consultada: {error.message}")
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
