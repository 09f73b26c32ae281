"""What the capture service shows per company and product: the status line and ``--once`` results.

The decisions come from the same pure ``decide`` the engines use, computed for every company in
one pass over a handful of bulk reads (companies, settings, states, pauses, pending recoveries),
so the status of hundreds of companies costs a few queries, not a few per company.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from app.capture.context import CaptureContext
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.products import REGISTRY
from app.core.cadence import ACTION_LABELS, Action, CadenceRules, CaptureState, Decision, decide, display_time
from app.core.cadence import BLOQUEADA as BLOQUEADA
from app.core.cadence import CONSULTANDO as CONSULTANDO
from app.core.cadence import DESATIVADA as DESATIVADA
from app.core.cadence import EM_ESPERA as EM_ESPERA
from app.core.cadence import PAUSA_GLOBAL as PAUSA_GLOBAL
from app.core.clock import BRASILIA, brasilia_iso
from app.core.errors import CapturaError
from app.core.other_consumer import OtherConsumerSummary
from app.core.products import Environment, Product
from app.store.records import CaptureSettings, Company

LABELS = ACTION_LABELS  # the status words, declared once in app.core.cadence
OTHER_INSTANCE = "outra instância do Captura DF-e"  # a lock holder that did not say who it is
_FAR = timedelta(days=3650)


def _iso(instant: datetime | None) -> str | None:
    return brasilia_iso(instant) if instant is not None else None


class Named(TypedDict):
    """The fields naming a company and product, first in every per-company record."""

    company_id: int
    cnpj: str
    name: str
    product: Product


def named(company: Company, product: Product) -> Named:
    """:class:`Named` for ``company`` and ``product`` (a record's constructor takes it as ``**``)."""
    return {"company_id": company.id, "cnpj": company.cnpj.value, "name": company.name, "product": product}


def _company_product(company_id: int, cnpj: str, name: str, product: Product) -> dict[str, Any]:
    """The JSON keys naming a company and product, first in every per-company record."""
    return {"company_id": company_id, "cnpj": cnpj, "name": name, "product": product.value}


@dataclass(frozen=True, slots=True)
class CompanyStatus:
    """One company and product as the UI and ``status --json`` show it."""

    company_id: int
    cnpj: str
    name: str
    product: Product
    label: str  # Consultando, Em espera, Bloqueada, Pausa global, Desativada
    until: datetime | None
    reason: str
    last_cstat: str | None = None
    last_message: str | None = None
    documents_today: int = 0  # documents received since 00:00 Brasília (each once, events apart)
    pending_recoveries: int = 0
    next_query_at: datetime | None = None
    stalled: bool = False
    action: Action = Action.WAIT  # the raw decision (a grid sorts and colours on it)
    capturing: bool = False  # a query is in flight
    other_consumer: OtherConsumerSummary | None = None  # another system consumes it (issue 22)

    def to_json(self) -> dict[str, Any]:
        return {
            **_company_product(self.company_id, self.cnpj, self.name, self.product),
            "label": self.label,
            "until": _iso(self.until),
            "reason": self.reason,
            "last_cstat": self.last_cstat,
            "last_message": self.last_message,
            "documents_today": self.documents_today,
            "pending_recoveries": self.pending_recoveries,
            "next_query_at": _iso(self.next_query_at),
            "stalled": self.stalled,
            "other_consumer": self.other_consumer.to_json() if self.other_consumer is not None else None,
        }


def with_other_consumer(reason: str, summary: OtherConsumerSummary | None) -> str:
    """The state line, followed by what another system consuming the company means (issue 22)."""
    if summary is None:
        return reason
    return f"{reason} {summary.text()}" if reason else summary.text()


@dataclass(frozen=True, slots=True)
class CompanyOutcome:
    """What ``run_once`` did for one company and product, and why it stopped there."""

    company_id: int
    cnpj: str
    name: str
    product: Product
    queries: int
    documents: int
    quarantined: int
    action: Action  # the decision after the run (or without one: why it did not query)
    reason: str
    until: datetime | None
    ran: bool  # a distribution run happened (it may still have made no query)
    skipped: bool = False  # another run of this company was in progress

    def to_json(self) -> dict[str, Any]:
        return {
            **_company_product(self.company_id, self.cnpj, self.name, self.product),
            "queries": self.queries,
            "documents": self.documents,
            "quarantined": self.quarantined,
            "action": self.action.value,
            "reason": self.reason,
            "until": _iso(self.until),
            "ran": self.ran,
            "skipped": self.skipped,
        }


@dataclass(frozen=True, slots=True)
class OnceReport:
    """The result of ``CaptureService.run_once``: JSON-friendly through ``to_json``."""

    started_at: datetime
    finished_at: datetime
    outcomes: tuple[CompanyOutcome, ...]
    manifestations_sent: int
    recoveries_tried: int

    @property
    def queries(self) -> int:
        return sum(o.queries for o in self.outcomes)

    @property
    def documents(self) -> int:
        return sum(o.documents for o in self.outcomes)

    def outcome(self, company_id: int, product: Product = Product.NFE) -> CompanyOutcome:
        for o in self.outcomes:
            if o.company_id == company_id and o.product is product:
                return o
        raise KeyError((company_id, product))

    def to_json(self) -> dict[str, Any]:
        return {
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "queries": self.queries,
            "documents": self.documents,
            "manifestations_sent": self.manifestations_sent,
            "recoveries_tried": self.recoveries_tried,
            "companies": [o.to_json() for o in self.outcomes],
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One company's configured product with its state and decision at ``now``."""

    company: Company
    settings: CaptureSettings
    state: CaptureState
    decision: Decision


def snapshots(
    ctx: CaptureContext,
    product: Product,
    rules: CadenceRules,
    now: datetime,
    company_id: int | None = None,
    *,
    check_certificates: bool = True,
) -> list[Snapshot]:
    """Every company configured for ``product`` (enabled or not), decided in one pass.

    ``check_certificates`` False: another process captures and holds the certificates (a demo's
    live only in its memory); this one's vault would say "no key" of a capture that runs fine."""
    companies = ctx.companies.list_companies()
    if company_id is not None:
        companies = [c for c in companies if c.id == company_id]
    enabled = {c.id: s for c, s in ctx.companies.enabled_for(product)}
    states = {s.company_id: s for s in ctx.cursors.list_states(product)}
    pauses: dict[Environment, datetime | None] = {}
    others: dict[int, CaptureSettings] | None = None
    result = []
    for company in companies:
        settings = enabled.get(company.id)
        if settings is None:
            # Not enabled: its settings, if it has the product at all (every company's in one read:
            # an office of 200 companies without this product read 200 times at each listing).
            others = ctx.companies.settings_for(product) if others is None else others
            settings = others.get(company.id)
            if settings is None:
                continue
        if settings.environment not in pauses:
            pause = ctx.cursors.get_pause(product, settings.environment)
            pauses[settings.environment] = pause.paused_until if pause else None
        active = settings.enabled and company.active
        state = states.get(company.id) or CaptureState(company.id, product)
        decision = decide(
            state,
            rules,
            now,
            global_pause_until=pauses[settings.environment],
            certificate_problem=ctx.certificates.problem(company, now) if active and check_certificates else None,
            enabled=active,
        )
        result.append(Snapshot(company, settings, state, decision))
    return result


def due_wait(
    next_pass: datetime | None, now: datetime, captured_elsewhere: str | None = None
) -> tuple[datetime | None, str]:
    """A company free to be queried is "Em espera" of the capture's next pass: until when, and a
    reason that says so (not the decision's "Consulta liberada a partir do NSU", which beside the
    label read as a contradiction). ``next_pass`` None: no capture runs in this process;
    ``captured_elsewhere``: who captures instead (the data folder's lock holder)."""
    if captured_elsewhere is not None:
        return None, f"Consulta liberada, feita por quem captura nesta pasta: {captured_elsewhere}."
    if next_pass is None:
        return None, (
            "Consulta liberada, feita quando a captura rodar (aplicativo aberto, capture --daemon ou capture --once)."
        )
    if next_pass <= now:
        return None, "Consulta liberada: começa agora."
    return next_pass, f"Consulta liberada: na próxima passagem da captura, às {display_time(next_pass, now)}."


def captured_elsewhere(data_dir: Path) -> str | None:
    """Who holds the data folder's capture lock, when another process does (None: nobody).

    Takes the lock for an instant to find out (the OS lock is the only truth: the owner file
    survives a crash); ``manifest`` does the same before sending."""
    lock = DataFolderLock(data_dir, owner="linha de comando (status)")
    try:
        lock.acquire()
    except AlreadyRunning as error:
        return error.holder or OTHER_INSTANCE
    except CapturaError:  # the folder cannot be locked at all: nobody captures in it either
        return None
    lock.release()
    return None


def missing_engine_reason(product: Product) -> str | None:
    """Why nothing captures ``product`` although a company has it enabled; None when an engine
    exists (the products registered in ``app.capture.products.REGISTRY``)."""
    if product in REGISTRY:
        return None
    return (
        f"A captura de {product.label} ainda não existe nesta versão: nada é consultado e nenhum "
        f"documento de {product.label} chega (ela começa sozinha quando a captura existir)."
    )


def without_engine(ctx: CaptureContext, company_id: int | None = None) -> list[CompanyStatus]:
    """Every company with a product enabled that no engine captures, as a status that says so
    ("Desativada" and why), so that neither ``status`` nor the window leaves it out silently."""
    result = []
    for product in Product:
        reason = missing_engine_reason(product)
        if reason is None:
            continue
        for company, _settings in ctx.companies.enabled_for(product):
            if company_id is not None and company.id != company_id:
                continue
            status = CompanyStatus(
                **named(company, product), label=DESATIVADA, until=None, reason=reason, action=Action.DISABLED
            )
            result.append(status)
    return result


def pending_recoveries(ctx: CaptureContext, product: Product, now: datetime) -> Counter[int]:
    """Pending gap recoveries per company, in one read."""
    return Counter(g.company_id for g in ctx.recoveries.due(now + _FAR, limit=1_000_000, product=product))


def start_of_day(now: datetime) -> datetime:
    """00:00 of ``now``'s Brasília day."""
    local = now.astimezone(BRASILIA)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def documents_since(ctx: CaptureContext, state: CaptureState, since: datetime) -> int:
    """Documents of one company received since ``since``, each once (its resumo and complete
    versions, its events: one document); ``CaptureService.status`` reads every company's at once."""
    if state.last_query_at is None or state.last_query_at < since:
        return 0
    return ctx.items.count_documents_received_since(state.product, since).get(state.company_id, 0)
