"""The independent check of the office database (#24): two workstations, as a person sets them up.

Two data folders, each driven only through the real command line in its own processes
(``python main.py --data-dir … --database URL …``, its own keyring), on one empty PostgreSQL
database and the sandbox standing in for the national service over real mutual TLS, on the real
clock. Each workstation reaches the sandbox through its own door (:class:`tests.office.rig.Door`),
so the test sees who asked. A registers the companies (and migrates the empty database); B runs
``company add`` with the same certificates, which imports them into its own vault (a workstation
able to take over). Both start ``capture --daemon`` at once: exactly one holds the lease and
queries, the other never does; the referee saw no rule broken; ``documents list --json`` in
either folder lists every published document once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.clock import SystemClock
from app.core.products import Product
from app.sandbox.sandbox import Sandbox
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.items import DistributionItemRepository
from app.store.lease import NodeLeases
from tests.conftest import wait_until
from tests.office.rig import Door, point_at_door
from tests.support.crash import SUPPLIERS, CrashPlan, crash_cnpj
from tests.support.test_keyring import BACKEND

ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT = 120  # real seconds for one short command on a loaded machine
PER_COMPANY = 4  # NF-e waiting for the first node, per company
# The crash rig's allowance for a child's start-up: under Wine on a loaded machine a Windows child
# spent over 60 s importing the app (the lane's run of this test timed out at 120 s).
STARTUP = CrashPlan().ready_timeout


@dataclass
class Station:
    name: str
    data_dir: Path
    env: dict[str, str]
    door: Door
    daemon: subprocess.Popen[bytes] | None = None

    def argv(self, url: str, *words: str) -> list[str]:
        return [sys.executable, str(ROOT / "main.py"), "--data-dir", str(self.data_dir), "--database", url, *words]

    def run(self, url: str, *words: str) -> str:
        done = subprocess.run(
            self.argv(url, *words), cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=CLI_TIMEOUT
        )
        assert done.returncode == 0, (self.name, words, done.stdout, done.stderr)
        return done.stdout

    def log(self) -> Path:
        return self.data_dir.parent / f"daemon-{self.name}.log"

    def start_daemon(self, url: str) -> None:
        with open(self.log(), "wb") as output:  # the child keeps its own descriptor
            self.daemon = subprocess.Popen(
                self.argv(url, "capture", "--daemon"), cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT
            )

    def log_text(self) -> str:
        return self.log().read_text(errors="replace") if self.log().exists() else ""


def _station(root: Path, name: str, sandbox: Sandbox, ca: Path) -> Station:
    folder = root / name
    folder.mkdir()
    door = Door(sandbox)
    point_at_door(folder, door, ca)
    env = {key: value for key, value in os.environ.items() if key != "CAPTURA_DATABASE"}
    # Each workstation its own keyring (two machines): the tests' file keyring under its own folder.
    env.update(PYTHON_KEYRING_BACKEND=BACKEND, XDG_DATA_HOME=str(root / f"keyring-{name}"))
    return Station(name, folder, env, door)


@contextmanager
def _office(root: Path) -> Iterator[tuple[Sandbox, dict[str, Station]]]:
    sandbox = Sandbox(SystemClock(), seed=7)
    stations: dict[str, Station] = {}
    try:
        sandbox.start_https()
        ca = root / "sandbox-ca.pem"
        ca.write_bytes(sandbox.ca_cert_pem)
        stations.update((name, _station(root, name, sandbox, ca)) for name in ("A", "B"))
        yield sandbox, stations
    finally:
        for station in stations.values():
            if station.daemon is not None and station.daemon.poll() is None:
                station.daemon.kill()
                station.daemon.wait(30)
            station.door.stop()
        sandbox.stop()


def _stored(db: Database) -> dict[str, set[int]]:
    """The NF-e NSUs the office database holds, per company CNPJ (the app's own repositories)."""
    items = DistributionItemRepository(db)
    companies = CompanyRepository(db).list_companies()
    return {c.cnpj.value: set(items.received(c.id, Product.NFE, 1, 10**9)) for c in companies}


def _stop(station: Station) -> None:
    """A graceful stop (the node releases the lease); Windows: ended (no console to send
    Ctrl+Break to under Wine; the crash tests cover its graceful stop)."""
    daemon = station.daemon
    assert daemon is not None
    if sys.platform == "win32":
        daemon.kill()
        daemon.wait(60)
        return
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(60) == 0, station.log_text()[-2000:]


def test_two_data_folders_one_database_one_queries_both_list_every_document_once(
    tmp_path: Path, postgres_url: str
) -> None:
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")  # as a person types it
    with _office(tmp_path) as (sandbox, stations):
        a, b = stations["A"], stations["B"]
        cnpjs = [crash_cnpj(20 + i) for i in range(2)]
        for index, cnpj in enumerate(cnpjs):
            cert = sandbox.company(cnpj, f"EMPRESA DUAS PASTAS {index} LTDA")
            pfx, secret = tmp_path / f"{cnpj}.pfx", tmp_path / f"{cnpj}.txt"
            pfx.write_bytes(cert.pfx)
            secret.write_text(cert.password, encoding="utf-8")
            add = ("company", "add", "--pfx", str(pfx), "--password-file", str(secret))
            a.run(url, *add, "--environment", "homologacao", "--products", "nfe")
            assert "Certificado importado nesta estação" in b.run(url, *add), cnpj
        for supplier in SUPPLIERS:
            sandbox.party(supplier)
        keys = {cnpj: {sandbox.publish_nfe(SUPPLIERS[0], cnpj).key for _ in range(PER_COMPANY)} for cnpj in cnpjs}

        a.start_daemon(url)
        b.start_daemon(url)
        db = open_database(url.replace("postgresql://", "postgresql+psycopg://"))
        try:

            def alive() -> None:
                for station in (a, b):
                    assert station.daemon is not None and station.daemon.poll() is None, station.log_text()

            def node() -> Station | None:
                alive()
                holder = NodeLeases(db).holder()
                pids = {s.daemon.pid: s for s in (a, b) if s.daemon is not None}
                return pids.get(holder.pid) if holder is not None and holder.live(db.clock.now()) else None

            def captured() -> bool:
                stored = _stored(db)
                return node() is not None and all(
                    stored.get(c, set()) >= {e.nsu for e in sandbox.entries("nfe", c)} for c in cnpjs
                )

            wait_until(captured, timeout=STARTUP + 60)  # both daemons' start-up, then the capture
            capturing = node()
            assert capturing is not None
            other = b if capturing is a else a
            wait_until(lambda: "Captura: estação" in other.log_text(), timeout=60)  # it stands by, naming the node
            assert capturing.door.count("nfe_dist") >= len(cnpjs)
            assert other.door.count() == 0  # exactly one workstation queried the national service

            for station in (a, b):  # each data folder lists every document once
                listed = json.loads(station.run(url, "documents", "list", "--json", "--limit", "1000"))
                for cnpj in cnpjs:
                    mine = [row["key"] for row in listed if row["company"] == cnpj]
                    assert sorted(mine) == sorted(keys[cnpj]), (station.name, cnpj, mine)
            assert other.door.count() == 0
            assert sandbox.referee.report()["violations"] == []  # no 656, no rule broken
            for station in (other, capturing):
                _stop(station)
            if sys.platform != "win32":  # released by the node's graceful stop: the next node takes it at once
                holder = NodeLeases(db).holder()
                assert holder is None or not holder.live(db.clock.now()), holder
        finally:
            db.close()
