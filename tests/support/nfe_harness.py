"""The app's capture side wired to the sandbox on one virtual clock (tests and benchmarks).

Over real HTTPS with mutual TLS by default; ``in_process=True`` reaches the same handlers through
the sandbox's httpx transport, for long simulations. ``nfe_harness``, ``cte_harness`` and
``nfse_harness`` give the same harness for one product each (NFS-e: the ADN's REST API).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from app.capture.context import CaptureContext
from app.capture.cte import CteCapture
from app.capture.engine import DistributionCapture
from app.capture.nfe import NfeCapture
from app.capture.nfse import NfseCapture
from app.capture.office import Office
from app.capture.simulation import DriveStats, drive, run_pending
from app.core.clock import FakeClock
from app.core.products import Environment, Product
from app.sandbox.sandbox import Sandbox
from app.sandbox.serve import write_settings
from app.store.records import CaptureSettings, Company

RECIPIENT = "11222333000181"
SUPPLIER = "99888777000100"
CARRIER = "44555666000181"
START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


@dataclass
class Harness:
    """The app's capture side and the sandbox, sharing one virtual clock."""

    clock: FakeClock
    sandbox: Sandbox
    office: Office
    ctx: CaptureContext
    capture: DistributionCapture
    company: Company
    product: Product = Product.NFE
    timeline: list[tuple[datetime, Callable[[], object]]] = field(default_factory=list)

    def at(self, when: datetime, action: Callable[[], object]) -> None:
        """Schedule a sandbox action (a publication, an outage...) on the virtual clock."""
        self.timeline.append((when, action))
        self.timeline.sort(key=lambda item: item[0])

    def run_pending(self) -> DriveStats:
        """Run what the service's jobs have due now (``app.capture.simulation.run_pending``)."""
        return run_pending(self.capture)

    def run_until(self, end: datetime) -> DriveStats:
        """Drive the capture as its scheduler would until ``end`` (``app.capture.simulation``),
        the timeline's actions firing at their times."""
        events = [event for event in self.timeline if event[0] <= end]
        self.timeline = [event for event in self.timeline if event[0] > end]
        return drive(self.capture, self.clock, end, timeline=events)

    def settings(self, **changes: object) -> None:
        current = self.office.companies.get_settings(self.company.id, self.product)
        assert current is not None
        from dataclasses import replace

        self.office.companies.save_settings(replace(current, **changes))  # type: ignore[arg-type]

    def stored_nsus(self) -> list[int]:
        state = self.ctx.cursors.get(self.company.id, self.product)
        return self.ctx.items.received(self.company.id, self.product, 1, max(state.ult_nsu, 1))


@contextmanager
def nfe_harness(
    tmp_path: Path, *, in_process: bool = False, seed: int = 3, database: str | None = None
) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFE, in_process=in_process, seed=seed, database=database) as harness:
        yield harness


@contextmanager
def cte_harness(
    tmp_path: Path, *, in_process: bool = False, seed: int = 3, database: str | None = None
) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.CTE, in_process=in_process, seed=seed, database=database) as harness:
        yield harness


@contextmanager
def nfse_harness(
    tmp_path: Path, *, in_process: bool = False, seed: int = 3, database: str | None = None
) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFSE, in_process=in_process, seed=seed, database=database) as harness:
        yield harness


@contextmanager
def product_harness(
    tmp_path: Path, product: Product, *, in_process: bool = False, seed: int = 3, database: str | None = None
) -> Iterator[Harness]:
    """``database``: an office server's URL (a PostgreSQL database at head); None: the data
    folder's SQLite file."""
    clock = FakeClock(START)
    sandbox = Sandbox(clock, seed=seed)
    if in_process:
        sandbox.serve_in_process()
    else:
        sandbox.start_https()
    cert = sandbox.company(RECIPIENT, "DESTINATARIA EXEMPLO LTDA")
    sandbox.party(SUPPLIER)
    data_dir = tmp_path / "dados"
    data_dir.mkdir()
    ca = tmp_path / "sandbox-ca.pem"
    ca.write_bytes(sandbox.ca_cert_pem)
    write_settings(sandbox, data_dir, ca)
    office = Office(data_dir, clock=clock, database=database)
    company = office.register_company(cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(product,))
    office.companies.save_settings(
        CaptureSettings(company.id, product, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    transport_for = (lambda a1: sandbox.transport(cert)) if in_process else None
    ctx = office.capture_context(transport_for=transport_for, rng=random.Random(11))
    try:
        captures = {Product.NFE: NfeCapture, Product.CTE: CteCapture, Product.NFSE: NfseCapture}
        capture = captures[product](ctx)
        yield Harness(clock, sandbox, office, ctx, capture, company, product)
    finally:
        office.close()  # closes the context's HTTP clients too
        sandbox.stop()
