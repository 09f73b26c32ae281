"""Point queries of the NF-e distribution: NSU gap recovery and user reprocessing (§4.6, §4.7).

``consNSU``/``consChNFe`` are never part of the routine capture. They run only for gaps (found when
a 656 moves the cursor, or by the daily 23:00 check over the last 3 days) and when a user asks for
one document. A document already stored is never queried again. Every query respects the sliding
20-per-hour quota of queries that returned a document, the 656 suspension of point queries, and
NT 2018.002's 10 queries of one key per hour; without a slot internal work is deferred (not an
attempt) and a user is told when it can run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.capture.context import CaptureContext, CaptureNotice, call_record, outcome_of
from app.capture.nfe_engine import PRODUCT, SERVICE, CompanyLocks
from app.capture.nfe_processing import process_document
from app.core.cadence import point_queries_allowed, rules_for
from app.core.cadence_an import apply_point_query_block
from app.core.errors import CapturaError
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
from app.core.recovery import DISPATCH_INTERVAL, after_attempt, lookback_start, next_daily_run
from app.fiscal.distribution import ConsChNFe, ConsNsu, DistributionClient, DistributionReply, Query
from app.fiscal.errors import CommunicationError
from app.store.records import CallOutcome, Company, GapRecovery, GapStatus

_CONSUMO_INDEVIDO = 656


@dataclass(frozen=True, slots=True)
class ReprocessResult:
    """What a user's "buscar esta nota" did: found locally, fetched, or not possible yet (and why)."""

    status: str  # "local", "fetched", "not_found", "deferred", "rejected"
    message: str
    document_id: int | None = None
    available_at: datetime | None = None


class NfePointQueries:
    def __init__(self, ctx: CaptureContext, locks: CompanyLocks) -> None:
        self.ctx = ctx
        self.locks = locks
        self.rules = rules_for(PRODUCT)

    # ------------------------------------------------------------------ daily gap check

    def next_daily_check(self, now: datetime) -> datetime:
        return next_daily_run(now)

    def daily_gap_check(self) -> int:
        """Queue every NSU missing among the last 3 days of each active company (23:00 Brasília)."""
        now = self.ctx.clock.now()
        queued = 0
        for company, _settings in self.ctx.companies.enabled_for(PRODUCT):
            first = self.ctx.items.first_received_since(company.id, PRODUCT, lookback_start(now))
            if first is None:
                continue
            state = self.ctx.cursors.get(company.id, PRODUCT)
            missing = tuple(self.ctx.items.missing(company.id, PRODUCT, first, state.ult_nsu))
            if missing:
                queued += self.ctx.recoveries.add(company.id, PRODUCT, next_attempt_at=now, nsus=missing)
        return queued

    # ------------------------------------------------------------------ recovery dispatch

    def next_due_at(self) -> datetime | None:
        return self.ctx.recoveries.next_attempt_at(PRODUCT)

    def dispatch(self, limit: int = 100, *, company_id: int | None = None) -> int:
        """Try every due recovery once (of one company when given; the scheduler calls this every
        5 minutes)."""
        tried = 0
        due = self.ctx.recoveries.due(
            self.ctx.clock.now(), limit=limit if company_id is None else 10_000, product=PRODUCT
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
            and self.ctx.items.received(company.id, PRODUCT, gap.nsu, gap.nsu)
            and not self.ctx.items.quarantined(company.id, PRODUCT, (gap.nsu,))
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
            state = self.ctx.cursors.get(company.id, PRODUCT)
            retry = max(state.point_queries_blocked_until or now, now) + DISPATCH_INTERVAL
            self.ctx.recoveries.update(
                gap.id, status=status, next_attempt_at=retry, count_attempt=False, last_error=step.reason
            )
        else:
            self.ctx.recoveries.update(
                gap.id, status=status, next_attempt_at=step.retry_at, count_attempt=True, last_error=step.reason
            )
        if status is GapStatus.ABANDONED:
            self.ctx.notify(CaptureNotice("recovery", company.id, PRODUCT, step.reason))
        return True

    # ------------------------------------------------------------------ user reprocessing

    def reprocess_key(self, company_id: int, key: str) -> ReprocessResult:
        """A user asks for one NF-e by key: from the database when there, else consChNFe if allowed."""
        company = self.ctx.companies.get(company_id)
        access_key = AccessKey.parse(key)
        summary = self.ctx.documents.find(company.id, PRODUCT, access_key.value)
        if summary is not None and summary.kind.value == "nfeProc":
            return ReprocessResult("local", "A nota completa já está na base; nenhuma consulta foi feita.", summary.id)
        lock = self.locks.for_cnpj(company.cnpj.value)
        if not lock.acquire(timeout=30):
            return ReprocessResult("deferred", "Outra consulta desta empresa está em andamento; tente em instantes.")
        try:
            now = self.ctx.clock.now()
            wait = self._user_wait(company, now, access_key.value)
            if wait is not None:
                return ReprocessResult("deferred", wait[0], available_at=wait[1])
            reply, error = self._query(company, ConsChNFe(access_key), access_key.value)
        finally:
            lock.release()
        if reply is None:
            return ReprocessResult("rejected", error or "Falha de comunicação.")
        if reply.cstat == 138:
            found = self.ctx.documents.find(company.id, PRODUCT, access_key.value)
            return ReprocessResult("fetched", "Documento obtido do Ambiente Nacional.", found.id if found else None)
        status = "not_found" if reply.cstat in (137, 217) else "rejected"
        return ReprocessResult(status, f"cStat {reply.cstat}: {reply.xmotivo}")

    # ------------------------------------------------------------------ shared

    def _stored(self, company: Company, key: str) -> bool:
        return self.ctx.documents.find(company.id, PRODUCT, key) is not None

    def _counted(self, company: Company, now: datetime) -> list[datetime]:
        return self.ctx.quota.counted_since(company.cnpj, PRODUCT, now - QUOTA_WINDOW - self.rules.safety_margin)

    def _slot_problem(self, company: Company, now: datetime, key: str | None) -> datetime | None:
        """None when a point query may run now, else when the internal work may be retried."""
        state = self.ctx.cursors.get(company.id, PRODUCT)
        counted = self._counted(company, now)
        blocked = None if point_queries_allowed(state, now) else state.point_queries_blocked_until
        if blocked is None and slot_available(counted, now) and (key is None or self._key_allowed(company, key, now)):
            return None
        if key is not None and not self._key_allowed(company, key, now):
            return next_key_query_at(self._key_times(company, key, now), now)
        return deferred_until(counted, now, timedelta(0), blocked_until=blocked)

    def _user_wait(self, company: Company, now: datetime, key: str) -> tuple[str, datetime] | None:
        state = self.ctx.cursors.get(company.id, PRODUCT)
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
        calls = self.ctx.audit.calls_for(SERVICE.value, f"consChNFe:{key}", now - QUOTA_WINDOW)
        return [c.at for c in calls]

    def _key_allowed(self, company: Company, key: str, now: datetime) -> bool:
        return key_query_allowed(self._key_times(company, key, now), now)

    def _query(self, company: Company, query: Query, key: str | None) -> tuple[DistributionReply | None, str | None]:
        """One consNSU/consChNFe with its bookkeeping: quota ledger, call log, 656 block, storage."""
        settings = self.ctx.companies.get_settings(company.id, PRODUCT)
        if settings is None:
            return None, "Captura de NF-e não configurada."
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
            client = DistributionClient.from_factory(self.ctx.http, a1, PRODUCT, settings.environment)
            reply = client.query(company.cnpj, query, settings.c_uf_autor)
        except CommunicationError as error:
            self.ctx.audit.log_call(
                call_record(
                    SERVICE, PRODUCT, company.id, operation, at, started, outcome_of(error), error=error.message
                )
            )
            self.ctx.quota.record(company.cnpj, PRODUCT, queried_at=at, returned_document=False)
            return None, error.message
        except CapturaError as error:  # certificate unusable or request refused before sending
            return None, error.message
        now = self.ctx.clock.now()
        returned = bool(reply.documents) and reply.cstat == 138
        self.ctx.quota.record(
            company.cnpj,
            PRODUCT,
            queried_at=at,
            returned_document=returned,
            nsu=query.nsu.value if isinstance(query, ConsNsu) else None,
            access_key=key,
        )
        outcome = CallOutcome.OK if reply.cstat in (137, 138) else CallOutcome.REJECTED
        call_id = self.ctx.audit.log_call(
            call_record(SERVICE, PRODUCT, company.id, operation, at, started, outcome, cstat=str(reply.cstat))
        )
        if reply.documents or reply.cstat not in (137, 138):
            self.ctx.archive(SERVICE, company.id, call_id, reply.request_bytes, reply.response_bytes)
        if reply.cstat == _CONSUMO_INDEVIDO:
            state = self.ctx.cursors.get(company.id, PRODUCT)
            self.ctx.cursors.save(apply_point_query_block(state, self.rules, now, reply.dh_resp))
        if reply.documents:
            items = [process_document(company.cnpj, doc) for doc in reply.documents]
            self.ctx.documents.store_batch(company.id, items)
        return reply, None
