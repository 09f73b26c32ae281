"""The demo's world: the sandbox, demo companies and the capture service on one sped-up clock.

Everything lives in the demo data folder (``<data dir>-demo``), which is reset at every start and
never mixes with real data. The sandbox serves HTTPS with mutual TLS on a loopback port chosen
by the system; a scenario keeps third parties issuing NF-e to the demo companies; the capture
service runs exactly as it does for real, on the demo's :class:`ScaledClock`.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from app.capture.context import CaptureContext, CaptureNotice
from app.capture.instance import LOCK_NAME, OWNER_NAME, DataFolderLock
from app.capture.office import Office
from app.capture.service import CaptureService
from app.config.logs import setup_logging, shutdown_logging
from app.config.paths import ensure_data_dir
from app.core.clock import ScaledClock, to_brasilia
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.demo import DEMO_SPEED
from app.demo.memory_keyring import KeyringSwap
from app.export.jobs import service_jobs
from app.sandbox.sandbox import Sandbox
from app.sandbox.scenario import Scenario, ScenarioRun
from app.sandbox.serve import write_settings
from app.store.records import CaptureSettings, Company, DocumentKind, DocumentQuery

log = logging.getLogger(__name__)
EXPORT_EVERY_REAL = timedelta(seconds=3)  # the demo's exports and hand-off, in real time

MARKER = ".captura-demo"
# What the app itself writes into a data folder: only these may be found in a folder we reset.
RESET_ENTRIES = (
    "captura.sqlite3",
    "captura.sqlite3-wal",
    "captura.sqlite3-shm",
    "captura.sqlite3-journal",
    "certificates",
    "settings.json",
    "sandbox-pki",
)
APP_ENTRIES = frozenset({MARKER, "logs", LOCK_NAME, OWNER_NAME, *RESET_ENTRIES})
# Every product with an engine in this version.
DEMO_PRODUCTS = (Product.NFE, Product.CTE, Product.NFSE)
DEMO_REFORM_SHARE = 0.4  # the demo shows IBS/CBS on part of its documents, as in 2026 (issue 23)
DEMO_NOTE_RATIO = 0.1  # and some of those NF-e adjusted by a nota de crédito or de débito
DEMO_CNPJS = tuple(Cnpj.from_body(body).value for body in ("112223330001", "223334440001", "334445550001"))
PUBLISHER_TICK = 0.2  # real seconds between two looks at the scenario's timetable


class DemoRefused(CapturaError):
    """The demo cannot start (its folder holds something that is not the demo's)."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """The demo's knobs; the defaults show every rule (a complete NF-e after the Ciência included)
    within the first real minute."""

    speed: float = DEMO_SPEED
    companies: int = 3
    seed: int = 7
    nfe_every_minutes: float = 10.0  # per company, on average, in virtual minutes
    cte_every_minutes: float = 30.0  # CT-e where the company is the taker, likewise
    nfse_every_minutes: float = 30.0  # NFS-e where the company is the tomador, likewise
    backlog_minutes: float = 40.0  # NF-e already waiting when the demo starts
    ciencia_wait_minutes: int = 5  # the automatic Ciência's wait after a resumo (5: the rule book's minimum)
    # Another system with the same certificate reads the first company's NF-e the first moment the
    # AN allows it this long after the start (virtual minutes), after our first complete NF-e came:
    # it takes the NSUs of the second hour, our next query meets the 656 and the cursor jumps
    # (about 63 s into a default run), and once the hour's block is over the NSUs it took come
    # back by consNSU (about 95 s in) while the company's state says what happened (issue 22).
    other_consumer_after_minutes: float | None = 75.0
    # The demo clock's instant at the start (aware); None: now. A test starts it before midnight.
    start: datetime | None = None
    log_level: str = "INFO"


@dataclass(frozen=True, slots=True)
class DemoVerdict:
    """What the sandbox's referee saw and what the app stored, at the end."""

    requests: int
    violations: list[dict[str, Any]]
    published: int
    delivered: int
    documents: int
    summaries: int
    complete: int
    by_company: dict[str, int] = field(default_factory=dict)
    other_taken: int = 0  # NF-e NSUs another system took by distNSU (issue 22)
    other_recovered: int = 0  # of those, the ones that came back to us by consNSU


def prepare_demo_folder(data_dir: Path) -> Path:
    """Empty the demo folder of a previous run (only a folder that holds nothing but app files)."""
    if data_dir.exists():
        foreign = sorted(p.name for p in data_dir.iterdir() if p.name not in APP_ENTRIES)
        if foreign and not (data_dir / MARKER).exists():
            raise DemoRefused(
                f"A pasta {data_dir} contém arquivos que não são da demonstração ({', '.join(foreign[:3])}); "
                "a demonstração não a usa. Escolha outra pasta com --data-dir."
            )
    ensure_data_dir(data_dir)
    for name in RESET_ENTRIES:
        path = data_dir / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    (data_dir / MARKER).write_text(
        "Pasta de dados da demonstração do Captura DF-e: apagada e recriada a cada início.\n", encoding="utf-8"
    )
    return data_dir


class DemoEnvironment:
    """Start with :meth:`start`, stop with :meth:`stop`; thread-safe to read while running."""

    def __init__(
        self,
        data_dir: Path,
        options: DemoOptions | None = None,
        *,
        listeners: Iterable[Callable[[CaptureNotice], None]] = (),
    ) -> None:
        self.data_dir = data_dir
        self.options = options or DemoOptions()
        self.clock = ScaledClock(self.options.speed, self.options.start)
        self._listeners = list(listeners)
        self._keyring = KeyringSwap()
        self._folder_lock = DataFolderLock(data_dir, owner="demonstração do Captura DF-e")
        self._stop = threading.Event()
        self._publisher: threading.Thread | None = None
        self._lock = threading.Lock()
        self.sandbox: Sandbox | None = None
        self.scenario: ScenarioRun | None = None
        self.office: Office | None = None
        self.ctx: CaptureContext | None = None
        self.service: CaptureService | None = None
        self.companies: list[Company] = []
        self.started = threading.Event()

    def add_listener(self, listener: Callable[[CaptureNotice], None]) -> None:
        """Receive the service's notices (from worker threads); call before :meth:`start`."""
        self._listeners.append(listener)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Build everything and start the service; raises ``CapturaError`` with a PT message."""
        opts = self.options
        self._folder_lock.acquire()  # two demos at once would reset each other's folder
        try:
            prepare_demo_folder(self.data_dir)
        except BaseException:
            self._folder_lock.release()
            raise
        setup_logging(self.data_dir, level=opts.log_level)
        log.info("Demonstração: pasta %s, relógio x%s", self.data_dir, opts.speed)
        self._keyring.install()
        try:
            self._build()
        except BaseException:
            self.stop()
            raise
        self.started.set()

    def _build(self) -> None:
        opts = self.options
        sandbox = self.sandbox = Sandbox(self.clock, seed=opts.seed)
        sandbox.start_https("127.0.0.1", 0)
        pki_dir = self.data_dir / "sandbox-pki"
        pki_dir.mkdir(parents=True, exist_ok=True)
        ca_file = pki_dir / "ca.pem"
        ca_file.write_bytes(sandbox.ca_cert_pem)
        write_settings(sandbox, self.data_dir, ca_file)
        scenario = Scenario(
            companies=opts.companies,
            company_cnpjs=_demo_cnpjs(opts.companies),
            third_parties=4,
            seed=opts.seed,
            nfe_per_day=24 * 60 / opts.nfe_every_minutes,
            cte_per_day=24 * 60 / opts.cte_every_minutes,
            nfse_per_day=24 * 60 / opts.nfse_every_minutes,
            reform_share=DEMO_REFORM_SHARE,
            note_ratio=DEMO_NOTE_RATIO,
        )
        start = self.clock.now() - timedelta(minutes=opts.backlog_minutes)
        self.scenario = scenario.attach(sandbox, start=start)
        self.scenario.run_until(self.clock.now())  # the backlog: documents waiting for the first query

        office = self.office = Office(self.data_dir, clock=self.clock)
        for cnpj, cert in self.scenario.certificates.items():
            company = office.register_company(
                cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=DEMO_PRODUCTS
            )
            for product in DEMO_PRODUCTS:
                office.companies.save_settings(
                    CaptureSettings(
                        company.id,
                        product,
                        environment=Environment.HOMOLOGACAO,
                        auto_ciencia=product is Product.NFE,
                        ciencia_wait_minutes=opts.ciencia_wait_minutes,
                        c_uf_autor="35",
                    )
                )
            log.info("Empresa de demonstração %s cadastrada", cnpj)
            self.companies.append(company)
        ctx = self.ctx = office.capture_context()
        ctx.listeners.extend(self._listeners)
        self._schedule_other_consumer(sandbox)
        self._publisher = threading.Thread(target=self._publish_loop, name="demo-publisher", daemon=True)
        self._publisher.start()
        self.service = CaptureService(ctx)
        # The export profiles made in the demo run too, every few real seconds whatever the speed.
        every = max(EXPORT_EVERY_REAL * self.clock.factor, timedelta(minutes=1))
        for job in service_jobs(ctx.db, ctx.clock, at_least=every):
            self.service.add_job(job)
        self.service.start()

    def _schedule_other_consumer(self, sandbox: Sandbox) -> None:
        """The sandbox plays the other system's read when the company's next request arrives."""
        after = self.options.other_consumer_after_minutes
        if after is None or not self.companies:
            return
        cnpj = self.companies[0].cnpj.value
        at = self.clock.now() + timedelta(minutes=after)
        sandbox.other_consumer(cnpj, Product.NFE.value, at)
        log.info(
            "Demonstração: outro sistema com o mesmo certificado lerá as NF-e de %s a partir de %s",
            cnpj,
            to_brasilia(at).strftime("%d/%m %H:%M"),
        )

    def _publish_loop(self) -> None:
        scenario = self.scenario
        assert scenario is not None
        while not self._stop.wait(PUBLISHER_TICK):
            try:
                scenario.run_until(self.clock.now())
            except Exception:  # a scenario hiccup must not end the demo
                log.exception("Falha ao publicar documentos da demonstração")

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the service gracefully, then the publisher and the sandbox; idempotent."""
        with self._lock:
            self._stop.set()
            if self.service is not None:
                self.service.stop(timeout=timeout)
            if self._publisher is not None:
                self._publisher.join(timeout)
                self._publisher = None
            if self.sandbox is not None:
                self.sandbox.stop()
            if self.office is not None:
                self.office.close()
                self.office = None
            self._keyring.restore()
            shutdown_logging()
            self._folder_lock.release()

    # ------------------------------------------------------------------ reading

    def company_names(self) -> dict[int, str]:
        return {c.id: c.name for c in self.companies}

    def stored(self, company_id: int, *kinds: DocumentKind) -> int:
        assert self.ctx is not None
        return self.ctx.documents.count(DocumentQuery(company_id, Product.NFE, kinds=tuple(kinds)))

    def verdict(self) -> DemoVerdict:
        """The referee's report and the store's counts (call while running or right after stop)."""
        assert self.sandbox is not None
        report = self.sandbox.referee.report()
        published = delivered = taken = recovered = 0
        for cnpj in _demo_cnpjs(self.options.companies):
            nfe = report["companies"].get(cnpj, {}).get("nfe", {})
            published += len(nfe.get("published", []))
            delivered += len(nfe.get("delivered", {}))
            theirs = nfe.get("competitor_delivered", {})
            taken += len(theirs)
            ours = nfe.get("delivered", {})
            recovered += sum(1 for nsu in theirs if "consNSU" in ours.get(nsu, {}).get("via", ()))
        documents = summaries = complete = 0
        by_company: dict[str, int] = {}
        if self.ctx is not None:
            for company in self.companies:
                count = self.stored(company.id)
                by_company[company.cnpj.value] = count
                documents += count
                summaries += self.stored(company.id, DocumentKind.RES_NFE)
                complete += self.stored(company.id, DocumentKind.NFE_PROC)
        return DemoVerdict(
            requests=report["requests"],
            violations=list(report["violations"]),
            published=published,
            delivered=delivered,
            documents=documents,
            summaries=summaries,
            complete=complete,
            by_company=by_company,
            other_taken=taken,
            other_recovered=recovered,
        )


def _demo_cnpjs(count: int) -> tuple[str, ...]:
    extra = tuple(Cnpj.from_body(f"{index + 1:04d}55660001").value for index in range(len(DEMO_CNPJS), count))
    return (DEMO_CNPJS + extra)[:count]
