"""The capture dashboard's data: every company × product, the global pauses, the gap ledger,
the government calls and documents per month (``Desk.dashboard``). Reads, and the one "Consultar
agora"; from any worker thread."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

from app.core.cadence import Action
from app.core.clock import BRASILIA
from app.core.products import Environment, Product
from app.desk import labels
from app.store.records import CallOutcome, GapLedgerLine

if TYPE_CHECKING:
    from app.capture.context import CaptureContext
    from app.capture.service import CaptureService
    from app.store.dashboard import DashboardRepository

MONTHS_SHOWN = 12
CALLS_SHOWN = 300
OUTCOME_LABELS = {
    CallOutcome.OK: "Respondida",
    CallOutcome.REJECTED: "Rejeitada",
    CallOutcome.HTTP_ERROR: "Erro HTTP",
    CallOutcome.NETWORK_ERROR: "Falha de rede",
    CallOutcome.TIMEOUT: "Tempo esgotado",
}
MONTH_NAMES = ("jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez")


@dataclass(frozen=True, slots=True)
class DashboardLine:
    """One company and product on the dashboard."""

    company_id: int
    cnpj: str
    name: str
    product: Product
    action: Action
    state: str  # "Consultando", "Em espera até 14:05", "Bloqueada até 15:00"...
    reason: str
    until: datetime | None
    next_query_at: datetime | None
    last_answer: str  # "138 — Documento localizado" or "-"
    documents_today: int
    pending_recoveries: int
    ult_nsu: int
    max_nsu: int
    stalled: bool
    # another system consumes this company with the same certificate (issue 22): the clerk's sentence
    other_consumer: str | None = None

    @property
    def loading(self) -> bool:
        """Still catching up with the queue (the initial load): NSUs received of maxNSU."""
        return self.max_nsu > 0 and self.ult_nsu < self.max_nsu

    @property
    def progress_text(self) -> str:
        if self.max_nsu <= 0:
            return "-"
        share = min(100, self.ult_nsu * 100 // self.max_nsu)
        return f"{share}% ({self.ult_nsu:,} de {self.max_nsu:,})".replace(",", ".")


@dataclass(frozen=True, slots=True)
class PauseLine:
    product: Product
    environment: Environment
    until: datetime
    reason: str


@dataclass(frozen=True, slots=True)
class CallLine:
    at: datetime
    company: str
    product: Product | None
    service: str  # the service's name as the user knows it
    operation: str  # what was asked, in words ("distNSU", "Evento 210210: Ciência da Operação")
    detail: str  # the raw operation (an event Id with its key), for a tooltip
    outcome: CallOutcome
    outcome_text: str
    cstat: str
    duration_ms: int


@dataclass(frozen=True, slots=True)
class MonthCount:
    month: date  # the first day
    label: str  # "nov/26"
    counts: dict[Product, int]


@dataclass(frozen=True, slots=True)
class QueryNow:
    """What "Consultar agora" did: ``ran`` with its result, or why not and when it may."""

    ran: bool
    message: str
    allowed_at: datetime | None = None


def service_text(service: str) -> str:
    from app.config.endpoints import Service

    try:
        return Service(service).label
    except ValueError:
        return service


def operation_text(operation: str) -> str:
    """An event's Id (``ID`` + tpEvento + key + sequence) as the event's name; others as sent."""
    if operation.startswith("ID") and operation[2:8].isdigit() and len(operation) > 8:
        return f"Evento {operation[2:8]}: {labels.manifestation_label(operation[2:8])}"
    return operation


def month_starts(today: date, months: int = MONTHS_SHOWN) -> list[date]:
    """The first days of the last ``months`` months up to this one, and of the next (the end)."""
    year, month = today.year, today.month
    starts = []
    for back in range(months - 1, -1, -1):
        y, m = divmod(month - 1 - back, 12)
        starts.append(date(year + y, m + 1, 1))
    y, m = divmod(month, 12)
    starts.append(date(year + y, m + 1, 1))
    return starts


class Dashboard:
    """The dashboard's reads over the desk's capture context and service; ``capturing`` tells
    whether that service runs here (a read-only window queries nothing)."""

    def __init__(self, ctx: CaptureContext, service: CaptureService, capturing: Callable[[], bool]) -> None:
        self._ctx = ctx
        self._service = service
        self._capturing = capturing

    def _repository(self) -> DashboardRepository:
        from app.store.dashboard import DashboardRepository  # SQLAlchemy: loaded on the worker

        return DashboardRepository(self._ctx.db)

    def lines(self, company_id: int | None = None) -> list[DashboardLine]:
        service = self._service
        now = self._ctx.clock.now()
        cursors = {p: {s.company_id: s for s in self._ctx.cursors.list_states(p)} for p in service.captures}
        result = []
        for status in service.status(company_id=company_id):
            state = cursors[status.product].get(status.company_id)
            answer = "-"
            if status.last_cstat:
                answer = labels.answer_text(status.last_cstat, status.last_message)
            result.append(
                DashboardLine(
                    company_id=status.company_id,
                    cnpj=status.cnpj,
                    name=status.name,
                    product=status.product,
                    action=status.action,
                    state=labels.badge_text(status.action, status.capturing, status.until, now),
                    reason=status.reason,
                    until=status.until,
                    next_query_at=status.next_query_at,
                    last_answer=answer,
                    documents_today=status.documents_today,
                    pending_recoveries=status.pending_recoveries,
                    ult_nsu=state.ult_nsu if state else 0,
                    max_nsu=state.max_nsu if state else 0,
                    stalled=status.stalled,
                    other_consumer=status.other_consumer.text() if status.other_consumer is not None else None,
                )
            )
        return result

    def pauses(self) -> list[PauseLine]:
        """The global pauses in force (cStat 108/109 stop every company of a service)."""
        now = self._ctx.clock.now()
        found = []
        for product in self._service.captures:
            for environment in Environment:
                pause = self._ctx.cursors.get_pause(product, environment)
                if pause is not None and pause.paused_until > now:
                    found.append(PauseLine(product, environment, pause.paused_until, pause.reason))
        return found

    def gap_ledger(self, company_id: int | None = None) -> list[GapLedgerLine]:
        return self._repository().gap_ledger(company_id)

    def calls(
        self,
        *,
        company_id: int | None = None,
        product: Product | None = None,
        failures_only: bool = False,
        limit: int = CALLS_SHOWN,
    ) -> list[CallLine]:
        names = {c.id: c.name for c in self._ctx.companies.list_companies()}
        outcomes = tuple(o for o in CallOutcome if o is not CallOutcome.OK) if failures_only else ()
        records = self._repository().calls(limit=limit, company_id=company_id, product=product, outcomes=outcomes)
        return [
            CallLine(
                at=r.at,
                company=names.get(r.company_id, "-") if r.company_id is not None else "-",
                product=r.product,
                service=service_text(r.service),
                operation=operation_text(r.operation or ""),
                detail=r.operation or "",
                outcome=r.outcome,
                outcome_text=OUTCOME_LABELS[r.outcome],
                cstat=r.cstat or (str(r.http_status) if r.http_status else "-"),
                duration_ms=r.duration_ms,
            )
            for r in records
        ]

    def documents_per_month(self, company_ids: Sequence[int] = (), months: int = MONTHS_SHOWN) -> list[MonthCount]:
        """Documents issued per month (Brasília) and product, for the chart."""
        starts = month_starts(self._ctx.clock.now().astimezone(BRASILIA).date(), months)
        bounds = [datetime(d.year, d.month, 1, tzinfo=BRASILIA) for d in starts]
        repo = self._repository()
        per_product = {p: repo.documents_between(company_ids, p, bounds) for p in self._service.captures}
        return [
            MonthCount(
                month=start,
                label=f"{MONTH_NAMES[start.month - 1]}/{start.year % 100:02d}",
                counts={p: counts[i] for p, counts in per_product.items()},
            )
            for i, start in enumerate(starts[:-1])
        ]

    def query_now(self, company_id: int, product: Product) -> QueryNow:
        """Run the company's distribution now if every wait allows it; otherwise say when it may."""
        service = self._service
        if not self._capturing():
            return QueryNow(False, "Esta janela não está capturando (outra instância usa a pasta de dados).")
        now = self._ctx.clock.now()
        status = next(iter(service.status(company_id=company_id, product=product)), None)
        if status is None:
            return QueryNow(False, f"A captura de {product.label} não está configurada para esta empresa.")
        if status.capturing:
            return QueryNow(False, "Uma consulta desta empresa já está em andamento.")
        if status.action is Action.DISABLED:
            return QueryNow(False, f"Captura desativada: {status.reason}")
        if status.action is not Action.QUERY:
            when = status.until
            at = f" Próxima consulta permitida às {labels.hour_text(when, now)}." if when else ""
            return QueryNow(False, f"Ainda não é permitido consultar: {status.reason}{at}", when)
        results = service.run_distribution(product, company_id=company_id, trigger="manual")
        result = results.get(company_id)
        if result is None:
            return QueryNow(False, "A consulta não pôde começar agora; tente de novo em instantes.")
        if isinstance(result, Exception):
            return QueryNow(False, f"A consulta falhou: {result}")
        decision = result.decision
        after = f" {decision.reason}" if decision.reason else ""
        return QueryNow(
            True,
            f"Consulta feita: {result.documents} documento(s) recebido(s) em {result.queries} consulta(s).{after}",
            decision.until,
        )
