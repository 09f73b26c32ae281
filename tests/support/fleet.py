"""Several companies of one data folder wired to the sandbox on one clock (service tests, benchmarks).

Like :mod:`tests.support.nfe_harness`, with N companies, each presenting its own certificate to
the sandbox's in-process handlers (or over mutual TLS with ``in_process=False``). A ``Gate`` per
CNPJ can hold that company's calls (a stalled connection, as long as the test wants).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from app.capture.context import CaptureContext
from app.capture.office import Office
from app.capture.service import CaptureService
from app.certs.a1 import A1Certificate
from app.core.clock import Clock, FakeClock
from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox
from app.sandbox.serve import write_settings
from app.store.records import CaptureSettings, Company

SUPPLIER = "99888777000100"
START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def fleet_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{11_000_000 + index:08d}0001").value


class Gate:
    """Holds every call of one company until ``open()``: a stalled connection on demand."""

    def __init__(self) -> None:
        self.entered = threading.Event()  # a call is being held
        self.opened = threading.Event()
        self.calls = 0

    def hold(self) -> None:
        self.calls += 1
        self.entered.set()
        if not self.opened.wait(timeout=30):
            raise httpx.ReadTimeout("gate never opened (test bug)")

    def open(self) -> None:
        self.opened.set()


class _GatedTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, gates: dict[str, Gate], cnpj: str) -> None:
        self._inner = inner
        self._gates = gates
        self._cnpj = cnpj

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        gate = self._gates.get(self._cnpj)
        if gate is not None:
            gate.hold()
        return self._inner.handle_request(request)


@dataclass
class Fleet:
    """The data folder's capture side and the sandbox, sharing one clock."""

    clock: Clock
    sandbox: Sandbox
    office: Office
    ctx: CaptureContext
    companies: list[Company]
    certs: dict[str, IssuedCert]
    gates: dict[str, Gate] = field(default_factory=dict)

    @property
    def fake_clock(self) -> FakeClock:
        assert isinstance(self.clock, FakeClock)
        return self.clock

    def service(self, **options: object) -> CaptureService:
        return CaptureService(self.ctx, **options)  # type: ignore[arg-type]

    def gate(self, company: Company) -> Gate:
        """From now on, hold this company's calls until the gate opens."""
        gate = self.gates[company.cnpj.value] = Gate()
        return gate

    def settings(self, company: Company, **changes: object) -> None:
        current = self.office.companies.get_settings(company.id, Product.NFE)
        assert current is not None
        self.office.companies.save_settings(replace(current, **changes))  # type: ignore[arg-type]

    def requests(self, company: Company, service: str = "nfe_dist") -> int:
        """Requests the sandbox received from this company's certificate (our app only)."""
        return sum(
            1
            for r in self.sandbox.referee.requests
            if r.caller_doc == company.cnpj.value and r.service == service and not r.competitor
        )


@contextmanager
def fleet(
    tmp_path: Path,
    companies: int = 3,
    *,
    clock: Clock | None = None,
    in_process: bool = True,
    seed: int = 3,
) -> Iterator[Fleet]:
    clock = clock or FakeClock(START)
    sandbox = Sandbox(clock, seed=seed)
    if in_process:
        sandbox.serve_in_process()
    else:
        sandbox.start_https()
    sandbox.party(SUPPLIER)
    data_dir = tmp_path / "dados"
    data_dir.mkdir()
    ca = tmp_path / "sandbox-ca.pem"
    ca.write_bytes(sandbox.ca_cert_pem)
    write_settings(sandbox, data_dir, ca)
    office = Office(data_dir, clock=clock)
    certs: dict[str, IssuedCert] = {}
    registered = []
    for index in range(companies):
        cnpj = fleet_cnpj(index)
        cert = certs[cnpj] = sandbox.company(cnpj, f"EMPRESA {index:03d} LTDA")
        company = office.register_company(
            cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
        )
        office.companies.save_settings(
            CaptureSettings(company.id, Product.NFE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
        )
        registered.append(company)
    gates: dict[str, Gate] = {}

    def transport_for(a1: A1Certificate) -> httpx.BaseTransport:
        return _GatedTransport(sandbox.transport(certs[a1.holder_id]), gates, a1.holder_id)

    ctx = office.capture_context(transport_for=transport_for if in_process else None, rng=random.Random(11))
    try:
        yield Fleet(clock, sandbox, office, ctx, registered, certs, gates)
    finally:
        office.close()  # closes the context's HTTP clients too
        sandbox.stop()
