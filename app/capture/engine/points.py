"""Point queries of a SOAP distribution: NSU gap recovery (rule book §4.6-4.7 NF-e, §5.5 CT-e).

``consNSU`` (and NF-e's ``consChNFe``) are never part of the routine capture. They run only for
gaps (found when a cursor jump leaves holes, by the daily 23:00 check over the last 3 days, or an
NSU that failed to persist) and when a user asks for one document. A document already stored is
never queried again. Every query respects the sliding 20-per-hour quota of queries that returned
a document, the 656 suspension of point queries, and NT 2018.002's 10 queries of one key per
hour; without a slot internal work is deferred (not an attempt). A 137 for one NSU closes it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from app.capture.context import CaptureContext, CaptureNotice, call_record, outcome_of
from app.capture.engine.adapter import StoredLot
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.soap import SoapAdapter
from app.core.archive import archive_exchange
from app.core.cadence import point_queries_allowed, rules_for
from app.core.cadence_an import apply_point_query_block
from app.core.cadence_soap import outage_pause
from app.core.cstat import ANSWERED, CONSUMO_INDEVIDO, DOCUMENTS_FOUND
from app.core.errors import CapturaError
from app.core.health import health_alerts
from app.core.keys import AccessKey
from app.core.nsu import Nsu
from app.core.quota import (
    QUOTA_WINDOW,
    deferral_spacing,
    deferred_until,
    key_query_allowed,
    next_key_query_at,
    slot_available,
    user_wait_text,
)
from app.core.recovery import DISPATCH_INTERVAL, after_attempt, lookback_start
from app.fiscal.distribution import (
    ConsChNFe,
    ConsNsu,
    DistributedDocument,
    DistributionClient,
    DistributionReply,
    Query,
    read_archived_reply,
)
from app.fiscal.errors import CommunicationError
from app.store.records import CallOutcome, CaptureSettings, Company, GapRecovery, GapStatus


class PointQueries:
    """The gap recoveries of one product (its ``adapter``) and the daily check that queues them."""

    def __init__(self, ctx: CaptureContext, adapter: SoapAdapter, locks: CompanyLocks) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.product = adapter.product
        self.locks = locks
        self.rules = rules_for(adapter.product)

    # ------------------------------------------------------------------ daily gap check

    def daily_gap_check(self) -> int:
        """Queue every NSU missing among the last 3 days of each active company (23:00 Brasília)."""
        now = self.ctx.clock.now()
        queued = 0
        for company, _settings in self.ctx.companies.enabled_for(self.product):
            first = self.ctx.items.first_received_since(company.id, self.product, lookback_start(now))
            if first is None:
                continue
            state = self.ctx.cursors.get(company.id, self.product)
            missing = tuple(self.ctx.items.missing(company.id, self.product, first, state.ult_nsu))
            if missing:
                queued += self.ctx.recoveries.add(company.id, self.product, next_attempt_at=now, nsus=missing)
        self._health(now)
        return queued

    def _health(self, now: datetime) -> None:
        """The daily health alerts: a backlog many hours without capture, a cursor ahead (§5.5)."""
        for company, _settings in self.ctx.companies.enabled_for(self.product):
            state = self.ctx.cursors.get(company.id, self.product)
            if state.disabled_reason or state.paused:
                continue  # already stopped with its own reason
            for alert in health_alerts(state, now, label=self.product.label):
                self.ctx.notify(CaptureNotice("alert", company.id, self.product, alert))

    # ------------------------------------------------------------------ reprocessing on request

    def reprocess_nsu(self, company_id: int, nsu: int) -> str:
        """A user asks for one NSU again: kept as it is when stored and readable, else queued for
        a consNSU now (the dispatch respects the quota and the blocks). Returns what was done."""
        company = self.ctx.companies.get(company_id)
        stored = self.ctx.items.received(company.id, self.product, nsu, nsu)
        if stored and not self.ctx.items.quarantined(company.id, self.product, (nsu,)):
            return "local"
        self.ctx.recoveries.add(company.id, self.product, next_attempt_at=self.ctx.clock.now(), nsus=(nsu,))
        return "queued"

    def reprocess_archived(self, company_id: int, archive_id: int) -> int:
        """A whole archived lot processed and stored again from its archived answer, without a
        new query (§5.5): what is stored already stays as it is (idempotent), what failed before
        (a document quarantined by an older reader) is read again. Returns the items it held."""
        company = self.ctx.companies.get(company_id)
        owner, service = self.ctx.audit.exchange_owner(archive_id)
        if owner != company.id or service != self.adapter.service.value:
            raise CapturaError(f"A resposta arquivada {archive_id} não é de {self.product.label} desta empresa.")
        request, response = self.ctx.audit.get_exchange(archive_id)
        if response is None:
            raise CapturaError(f"A resposta arquivada {archive_id} não guardou o conteúdo da resposta.")
        reply = read_archived_reply(self.product, response, request or b"")
        if not reply.documents:
            return 0
        settings = self.ctx.companies.get_settings(company.id, self.product)
        return self._store(company, settings, reply.documents)

    # ------------------------------------------------------------------ recovery dispatch

    def next_due_at(self) -> datetime | None:
        return self.ctx.recoveries.next_attempt_at(self.product)

    def dispatch(self, limit: int = 100, *, company_id: int | None = None) -> int:
        """Try every due recovery once (of one company when given; the scheduler calls this every
        5 minutes)."""
        tried = 0
        due = self.ctx.recoveries.due(
            self.ctx.clock.now(), limit=limit if company_id is None else 10_000, product=self.product
        )
        for gap in due:
            if company_id is not None and gap.company_id != company_id:
                continue
            company = self.ctx.companies.get(gap.company_id)
            lock = self.locks.for_cnpj(company.cnpj.value)
            if not lock.acquire(blocking=False):
                continue  # its distribution is running: next dispatch
            try:
                if self._recover(company, gap):
                    tried += 1
            finally:
                lock.release()
        return tried

    def _recover(self, company: Company, gap: GapRecovery) -> bool:
        now = self.ctx.clock.now()
        if (
            gap.nsu is not None
            and self.ctx.items.received(company.id, self.product, gap.nsu, gap.nsu)
            and not self.ctx.items.quarantined(company.id, self.product, (gap.nsu,))
        ):
            self.ctx.recoveries.update(gap.id, status=GapStatus.RECOVERED, count_attempt=False, last_error=None)
            return False
        if gap.access_key is not None and self._stored(company, gap.access_key):
            self.ctx.recoveries.update(gap.id, status=GapStatus.RECOVERED, count_attempt=False)
            return False
        deferred = self._slot_problem(company, now, gap.access_key)
        if deferred is not None:
            # Not an attempt: the work waits for its slot, spread over up to 30 minutes.
            spacing = self.ctx.draw(deferral_spacing)
            self.ctx.recoveries.update(
                gap.id, status=GapStatus.PENDING, next_attempt_at=deferred + spacing, count_attempt=False
            )
            return False
        query: Query = ConsNsu(Nsu(gap.nsu)) if gap.nsu is not None else ConsChNFe(AccessKey(gap.access_key or ""))
        reply, error = self._query(company, query, gap.access_key)
        cstat = reply.cstat if reply is not None else None
        step = after_attempt(gap.attempts, cstat, self.ctx.clock.now(), self.ctx.jitter(), xmotivo=error or "")
        status = GapStatus(step.status.value)
        if status is GapStatus.PENDING and step.retry_at is None:
            # 656/108/109: the block or the pause decides; try again at the next dispatch after it.
            state = self.ctx.cursors.get(company.id, self.product)
            retry = max(state.point_queries_blocked_until or now, now) + DISPATCH_INTERVAL
            self.ctx.recoveries.update(
                gap.id, status=status, next_attempt_at=retry, count_attempt=False, last_error=step.reason
            )
        else:
            self.ctx.recoveries.update(
                gap.id, status=status, next_attempt_at=step.retry_at, count_attempt=True, last_error=step.reason
            )
        if status is GapStatus.ABANDONED:
            self.ctx.notify(CaptureNotice("recovery", company.id, self.product, step.reason))
        return True

    # ------------------------------------------------------------------ shared

    def _stored(self, company: Company, key: str) -> bool:
        return self.ctx.documents.find(company.id, self.product, key) is not None

    def _counted(self, company: Company, now: datetime) -> list[datetime]:
        return self.ctx.quota.counted_since(company.cnpj, self.product, now - QUOTA_WINDOW - self.rules.safety_margin)

    def _slot_problem(self, company: Company, now: datetime, key: str | None) -> datetime | None:
        """None when a point query may run now, else when the internal work may be retried."""
        paused = self._paused_until(company, now)
        if paused is not None:  # the service's 108/109 pause holds point queries too (§4.3)
            return paused
        state = self.ctx.cursors.get(company.id, self.product)
        counted = self._counted(company, now)
        blocked = None if point_queries_allowed(state, now) else state.point_queries_blocked_until
        if blocked is None and slot_available(counted, now) and (key is None or self._key_allowed(company, key, now)):
            return None
        if key is not None and not self._key_allowed(company, key, now):
            return next_key_query_at(self._key_times(company, key, now), now)
        return deferred_until(counted, now, timedelta(0), blocked_until=blocked)

    def _paused_until(self, company: Company, now: datetime) -> datetime | None:
        settings = self.ctx.companies.get_settings(company.id, self.product)
        pause = self.ctx.cursors.get_pause(self.product, settings.environment) if settings is not None else None
        return pause.paused_until if pause is not None and pause.paused_until > now else None

    def _user_wait(self, company: Company, now: datetime, key: str) -> tuple[str, datetime] | None:
        state = self.ctx.cursors.get(company.id, self.product)
        blocked = None if point_queries_allowed(state, now) else state.point_queries_blocked_until
        counted = self._counted(company, now)
        text = user_wait_text(counted, now, blocked_until=blocked)
        if text is not None:
            return text, deferred_until(counted, now, timedelta(0), blocked_until=blocked)
        if not self._key_allowed(company, key, now):
            when = next_key_query_at(self._key_times(company, key, now), now)
            return "Esta chave já foi consultada 10 vezes na última hora (NT 2018.002).", when
        return None

    def _key_times(self, company: Company, key: str, now: datetime) -> list[datetime]:
        calls = self.ctx.audit.calls_for(self.adapter.service.value, f"consChNFe:{key}", now - QUOTA_WINDOW)
        return [c.at for c in calls]

    def _key_allowed(self, company: Company, key: str, now: datetime) -> bool:
        return key_query_allowed(self._key_times(company, key, now), now)

    def _query(self, company: Company, query: Query, key: str | None) -> tuple[DistributionReply | None, str | None]:
        """One consNSU/consChNFe with its bookkeeping: quota ledger, call log, 656 block, storage."""
        settings = self.ctx.companies.get_settings(company.id, self.product)
        if settings is None:
            return None, f"Captura de {self.product.label} não configurada."
        service = self.adapter.service
        at = self.ctx.clock.now()
        started = time.monotonic()
        operation = (
            f"consChNFe:{key}"
            if isinstance(query, ConsChNFe)
            else f"consNSU:{query.nsu}"
            if isinstance(query, ConsNsu)
            else "distNSU"
        )
        try:
            a1 = self.ctx.certificates.get(company, at)
            client = DistributionClient.from_factory(self.ctx.http, a1, self.product, settings.environment)
            reply = client.query(company.cnpj, query, settings.c_uf_autor)
        except CommunicationError as error:
            self.ctx.audit.log_call(
                call_record(
                    service,
                    self.product,
                    company.id,
                    operation,
                    at,
                    started,
                    outcome_of(error),
                    error=error.message,
                )
            )
            nsu = query.nsu.value if isinstance(query, ConsNsu) else None
            self.ctx.quota.record(
                company.cnpj, self.product, queried_at=at, returned_document=False, nsu=nsu, access_key=key
            )
            return None, error.message
        except CapturaError as error:  # certificate unusable or request refused before sending
            return None, error.message
        now = self.ctx.clock.now()
        returned = bool(reply.documents) and reply.cstat == DOCUMENTS_FOUND
        self.ctx.quota.record(
            company.cnpj,
            self.product,
            queried_at=at,
            returned_document=returned,
            nsu=query.nsu.value if isinstance(query, ConsNsu) else None,
            access_key=key,
        )
        outcome = CallOutcome.OK if reply.cstat in ANSWERED else CallOutcome.REJECTED
        call_id = self.ctx.audit.log_call(
            call_record(service, self.product, company.id, operation, at, started, outcome, cstat=str(reply.cstat))
        )
        if archive_exchange(self.product, reply.cstat, has_documents=bool(reply.documents)):
            self.ctx.archive(service, company.id, call_id, reply.request_bytes, reply.response_bytes)
        if reply.cstat == CONSUMO_INDEVIDO:
            state = self.ctx.cursors.get(company.id, self.product)
            self.ctx.cursors.save(apply_point_query_block(state, self.rules, now, reply.dh_resp))
        pause = self.rules.outage_pause(reply.cstat)
        if pause is not None:  # 108/109 to a point query pauses the service as the distribution's answer does
            held = outage_pause(self.rules, now, reply.cstat, reply.xmotivo, reply.dh_resp, pause)
            if (self._paused_until(company, now) or now) < held.until:
                self.ctx.cursors.set_pause(self.product, settings.environment, held.until, held.reason, str(held.cstat))
                self.ctx.notify(CaptureNotice("status", None, self.product, held.reason))
        if reply.documents:
            self._store(company, settings, reply.documents)
        return reply, None

    def _store(
        self, company: Company, settings: CaptureSettings | None, documents: Sequence[DistributedDocument]
    ) -> int:
        """Documents a point query (or an archived answer) brought, with the product's own writes,
        in one transaction. Returns how many."""
        items = [self.adapter.process(company.cnpj, doc, settings) for doc in documents]
        with self.ctx.unit() as unit:
            stored = unit.store_lot(company.id, items)
            now = self.ctx.clock.now()
            self.adapter.within_recovery(StoredLot(unit, company, settings, items, stored, now))
        return len(items)
