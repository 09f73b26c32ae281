"""Two workstations, one office database: the rig of the capture node's failover test.

* One PostgreSQL database (the session's throwaway cluster), shared by every workstation.
* One sandbox over real HTTPS with mutual TLS on a sped-up clock (``ScaledClock``, shared with the
  children as in :mod:`tests.support.crash`), reached by each workstation through its **own door**
  (a second listening socket on the same router and state): the sandbox sees one government, the
  test sees which workstation asked.
* Workstation folders: ``A`` registers the companies (its vault holds their certificates), ``B``
  imports the same certificates into its own vault (a workstation able to take over); each has its
  own keyring file, as two machines do. ``C`` (no daemon, no certificate) is a clerk's desk.
* Children: ``capture --daemon`` per workstation (:mod:`tests.office.node_child`), killed with
  SIGKILL (TerminateProcess on Windows) or stopped gracefully like the crash test's
  (``tests.support.crash.ask_graceful_stop``: SIGTERM, or on Windows the end of the child's stdin).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import keyring

from app.capture.office import Office
from app.config.settings import CallTimeouts, load_settings, save_settings
from app.core.clock import ScaledClock
from app.core.products import Environment, Product
from app.sandbox.router import PATHS
from app.sandbox.sandbox import Sandbox
from app.sandbox.serve import SETTINGS_SERVICE
from app.sandbox.server import SandboxHttpsServer, server_context
from app.store.db import Database, open_database
from app.store.lease import LeaseHolder, NodeLeases
from app.store.records import CaptureSettings
from tests.office.node_child import LEASE_ENV
from tests.support.crash import SUPPLIERS, CrashPlan, close_stdin, crash_cnpj, spawn_child
from tests.support.test_keyring import TestKeyring

FACTOR = 600.0  # ten virtual minutes per real second: the hour's wait is 6 s
LEASE_TTL = timedelta(minutes=30)  # 3 real seconds
LEASE_RENEW = timedelta(minutes=5)  # half a real second
TICK = 0.01  # real seconds between two looks at a condition
DATABASE_ENV = "CAPTURA_DATABASE"
# A child's exit code after ``Popen.kill()``: SIGKILL, or on Windows TerminateProcess's exit code 1.
KILLED_EXIT = 1 if sys.platform == "win32" else -9


class Door:
    """One workstation's own socket to the sandbox: the same router (and state), its own port."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._router = sandbox.router
        self.paths: list[str] = []
        self._lock = threading.Lock()
        cert = sandbox.pki.server_cert(("localhost", "127.0.0.1", "::1"))
        context = server_context(cert.cert_pem, cert.key_pem, sandbox.pki.ca_cert_pem)
        self.server = SandboxHttpsServer(("127.0.0.1", 0), self, context)  # type: ignore[arg-type]
        self.server.start()
        self.base_url = f"https://127.0.0.1:{self.server.server_address[1]}"

    def dispatch(self, request: Any) -> Any:
        with self._lock:
            self.paths.append(request.path)
        return self._router.dispatch(request)

    def count(self, service: str | None = None) -> int:
        with self._lock:
            return sum(1 for p in self.paths if service is None or p.startswith(PATHS[service]))

    def stop(self) -> None:
        self.server.stop(5.0)


def point_at_door(folder: Path, door: Door, ca: Path, timeouts: CallTimeouts | None = None) -> None:
    """The data folder's homologação endpoints at the workstation's own door (and its call limits)."""
    settings = load_settings(folder)
    for service, key in SETTINGS_SERVICE.items():
        url = door.base_url + PATHS[key]
        settings = settings.with_endpoint(service, Environment.HOMOLOGACAO, url=url, ca_bundle=ca)
    save_settings(folder, settings if timeouts is None else replace(settings, call_timeouts=timeouts))


@dataclass
class Workstation:
    name: str
    data_dir: Path
    keyring_file: Path
    door: Door
    process: subprocess.Popen[bytes] | None = None
    lives: int = 0

    def log(self) -> Path:
        return self.data_dir.parent / f"{self.name}-{self.lives}.log"

    def log_text(self) -> str:
        return self.log().read_text(errors="replace") if self.log().exists() else ""


@dataclass
class OfficeRig:
    root: Path
    url: str
    sandbox: Sandbox
    clock: ScaledClock
    db: Database
    cnpjs: list[str]
    stations: dict[str, Workstation] = field(default_factory=dict)
    company_ids: dict[str, int] = field(default_factory=dict)
    keys: dict[str, list[str]] = field(default_factory=dict)  # published NF-e keys per recipient
    cursor_history: dict[str, list[int]] = field(default_factory=dict)

    # ------------------------------------------------------------------ set-up

    def station(self, name: str) -> Workstation:
        folder = self.root / name
        folder.mkdir()
        ca = self.root / "sandbox-ca.pem"
        door = Door(self.sandbox)
        seconds = CrashPlan().call_timeout  # real seconds: see CrashPlan.call_timeout
        timeouts = CallTimeouts(nfe=seconds, cte=seconds, nfse=seconds)
        point_at_door(folder, door, ca, timeouts)
        ws = self.stations[name] = Workstation(name, folder, self.root / f"keyring-{name}.cfg", door)
        return ws

    def register(self) -> None:
        """A registers the companies; B imports their certificates; C has none (a clerk)."""
        (self.root / "sandbox-ca.pem").write_bytes(self.sandbox.ca_cert_pem)
        a, b = self.station("A"), self.station("B")
        self.station("C")
        certs = {}
        with _keyring(a.keyring_file), Office(a.data_dir, clock=self.clock, database=self.url) as office:
            for index, cnpj in enumerate(self.cnpjs):
                cert = certs[cnpj] = self.sandbox.company(cnpj, f"EMPRESA ESCRITORIO {index:02d} LTDA")
                company = office.register_company(
                    cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
                )
                office.companies.save_settings(
                    CaptureSettings(company.id, Product.NFE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
                )
                self.company_ids[cnpj] = company.id
        with _keyring(b.keyring_file), Office(b.data_dir, clock=self.clock, database=self.url) as office:
            for cnpj, cert in certs.items():
                office.replace_certificate(self.company_ids[cnpj], cert.pfx, cert.password)
        for supplier in SUPPLIERS:
            self.sandbox.party(supplier)

    def publish(self, cnpj: str, count: int, *, ago: timedelta = timedelta(0)) -> None:
        for _ in range(count):
            nfe = self.sandbox.publish_nfe(SUPPLIERS[0], cnpj, at=self.clock.now() - ago)
            self.keys.setdefault(cnpj, []).append(nfe.key)

    # ------------------------------------------------------------------ children

    def spawn(self, name: str) -> subprocess.Popen[bytes]:
        ws = self.stations[name]
        ws.lives += 1
        if ws.process is not None:
            close_stdin(ws.process)  # the pipe of an earlier life (Windows' stop route)
        lease = {LEASE_ENV: f"{LEASE_TTL.total_seconds()};{LEASE_RENEW.total_seconds()}", DATABASE_ENV: self.url}
        ws.process = spawn_child("tests.office.node_child", ws.data_dir, ws.log(), self.clock, ws.keyring_file, lease)
        return ws.process

    def pid(self, name: str) -> int | None:
        process = self.stations[name].process
        return process.pid if process is not None and process.poll() is None else None

    # ------------------------------------------------------------------ reading the office

    def holder(self) -> LeaseHolder | None:
        holder = NodeLeases(self.db).holder()
        return holder if holder is not None and holder.live(self.clock.now()) else None

    def holder_is(self, name: str) -> bool:
        holder = self.holder()
        return holder is not None and holder.pid == self.pid(name)

    def _rows(self, sql: str) -> list[Any]:
        with self.db.driver_connection() as connection:
            return list(connection.execute(sql).fetchall())

    def stored_nsus(self) -> dict[str, list[int]]:
        result: dict[str, list[int]] = {}
        for cnpj, nsu in self._rows(
            "SELECT c.cnpj, i.nsu FROM distribution_items i JOIN companies c ON c.id = i.company_id "
            "WHERE i.product = 'nfe'"
        ):
            result.setdefault(cnpj, []).append(int(nsu))
        return result

    def published_nsus(self) -> dict[str, set[int]]:
        return {cnpj: {e.nsu for e in self.sandbox.entries("nfe", cnpj)} for cnpj in self.cnpjs}

    def sample_cursors(self) -> None:
        rows = self._rows(
            "SELECT c.cnpj, s.ult_nsu FROM capture_state s JOIN companies c ON c.id = s.company_id "
            "WHERE s.product = 'nfe'"
        )
        for cnpj, ult in rows:
            history = self.cursor_history.setdefault(cnpj, [])
            if not history or history[-1] != int(ult):
                history.append(int(ult))

    def caught_up(self) -> bool:
        stored = self.stored_nsus()
        return all(set(stored.get(c, ())) >= nsus for c, nsus in self.published_nsus().items())

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``condition`` (sampling the cursors meanwhile) until true, or fail naming ``what``."""
        deadline = time.monotonic() + timeout
        while True:
            self.sample_cursors()
            if condition():
                return
            for ws in self.stations.values():
                if ws.process is not None and ws.process.poll() not in (None, KILLED_EXIT):
                    raise AssertionError(
                        f"{ws.name} ended by itself ({ws.process.returncode}): {ws.log_text()[-3000:]}"
                    )
            if time.monotonic() > deadline:
                logs = {name: ws.log_text()[-2000:] for name, ws in self.stations.items()}
                raise AssertionError(f"timed out waiting for {what}; logs: {logs}")
            threading.Event().wait(TICK)


@contextmanager
def _keyring(path: Path) -> Iterator[None]:
    ring = TestKeyring()
    ring.file_path = str(path)
    previous = keyring.get_keyring()
    keyring.set_keyring(ring)
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@contextmanager
def office_rig(root: Path, url: str, *, companies: int = 2, seed: int = 1) -> Iterator[OfficeRig]:
    """The sandbox, the registered office and its workstations; every child killed at the end."""
    real_origin = datetime.now(UTC).replace(microsecond=0)
    clock = ScaledClock(FACTOR, real_origin, real_origin=real_origin)
    sandbox = Sandbox(clock, seed=seed)
    db = open_database(url, clock=clock)
    rig = OfficeRig(root, url, sandbox, clock, db, [crash_cnpj(i) for i in range(companies)])
    try:
        sandbox.start_https()
        rig.register()
        yield rig
    finally:
        for ws in rig.stations.values():
            if ws.process is not None and ws.process.poll() is None:
                ws.process.kill()
                ws.process.wait(30)
            if ws.process is not None:
                close_stdin(ws.process)
            ws.door.stop()
        sandbox.stop()
        db.close()
