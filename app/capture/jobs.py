"""The scheduled jobs of the capture service, declared once.

Both drivers read this table: the APScheduler service on the real (or sped-up) clock
(``app.capture.scheduler``) and the virtual-clock driver of the tests and benchmarks
(``app.capture.simulation``), so the two schedules cannot drift apart. Every routine job run
writes its row in the runs table (``JobHost.recorded``); a distribution pass writes one row per
company run, by the engine. ``extra_jobs`` is the plain extension point for packages above the
capture (app.export): they hand the service a ``Job`` and the capture never imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from app.capture.context import CaptureContext
from app.core.products import Product
from app.core.recovery import DAILY_RUN_AT

if TYPE_CHECKING:
    from app.capture.products import ProductCapture

T = TypeVar("T")


class JobHost(Protocol):
    """The parts of the capture service the jobs call (``app.capture.service.CaptureService``)."""

    ctx: CaptureContext

    @property
    def captures(self) -> Mapping[Product, ProductCapture]: ...

    @property
    def intervals(self) -> Any: ...

    def cycle(self, product: Product) -> timedelta: ...

    def dispatch_manifestations(self, product: Product | None = None, *, company_id: int | None = None) -> int: ...

    def dispatch_recoveries(self, product: Product | None = None, *, company_id: int | None = None) -> int: ...

    def daily_gap_check(self, product: Product | None = None) -> int: ...

    def prune(self) -> dict[str, int]: ...

    def recorded(self, job_type: str, work: Callable[[], T]) -> T: ...

    @property
    def extra_jobs(self) -> Sequence[Job]: ...


@dataclass(frozen=True, slots=True)
class Every:
    """Every ``interval`` of the clock's time, the first run ``delay`` after the start."""

    interval: timedelta
    delay: timedelta = timedelta(0)


@dataclass(frozen=True, slots=True)
class Daily:
    """Every day at ``app.core.recovery.DAILY_RUN_AT`` Brasília (23:00, rule book §4.6/§5.5); a
    late run within ``grace`` still runs."""

    grace: timedelta = timedelta(hours=12)


Trigger = Every | Daily


@dataclass(frozen=True, slots=True)
class Job:
    """One scheduled job.

    ``product`` set: a distribution pass of that product (the scheduler hands its companies to
    the workers, the simulation runs them inline). Otherwise ``run`` is the routine itself and
    ``due_at`` (None: it runs at each of its ticks) lets the simulation skip idle ticks.
    """

    name: str
    label: str
    trigger: Trigger
    run: Callable[[], object]
    due_at: Callable[[], datetime | None] | None = None
    product: Product | None = None


def jobs_of(service: JobHost) -> list[Job]:
    """The job table of ``service``: one distribution pass per product, then the routines."""
    intervals = service.intervals
    table = [
        Job(
            f"distribuicao-{product.value}",
            f"Distribuição de {product.label}",
            Every(service.cycle(product)),
            lambda: None,  # the drivers run the pass their own way (workers or inline)
            capture.distribution.planned_next,
            product=product,
        )
        for product, capture in service.captures.items()
    ]
    captures = list(service.captures.values())
    table += [
        Job(
            "manifestacoes",
            "Envio de manifestações",
            Every(intervals.manifestation),
            lambda: service.recorded("manifestacoes", service.dispatch_manifestations),
            lambda: _earliest(c.manifestation.next_due_at() for c in captures),
        ),
        Job(
            "recuperacoes",
            "Recuperação de NSUs",
            Every(intervals.recovery),
            lambda: service.recorded("recuperacoes", service.dispatch_recoveries),
            lambda: _earliest(c.points.next_due_at() for c in captures),
        ),
        Job(
            "verificacao-diaria",
            f"Verificação diária de lacunas ({DAILY_RUN_AT:%H:%M})",
            Daily(),
            service.daily_gap_check,  # records its row itself
        ),
        Job(
            "retencao",
            "Limpeza do arquivo de requisições",
            Every(intervals.prune, delay=intervals.prune_delay),
            service.prune,  # records its row itself
        ),
    ]
    # Jobs of the packages above the capture (the automatic export...), recorded like the routines.
    table += [Job(job.name, job.label, job.trigger, _recorded(service, job), job.due_at) for job in service.extra_jobs]
    return table


def _recorded(service: JobHost, job: Job) -> Callable[[], object]:
    return lambda: service.recorded(job.name, job.run)


def _earliest(times: Any) -> datetime | None:
    return min((t for t in times if t is not None), default=None)
