"""The sandbox in a process of its own, on the app's sped-up clock (benchmarks of the app's footprint).

``remote_sandbox`` starts ``sandbox serve`` (``app.sandbox.serve.serve``) in a child process with a
:class:`ScaledClock` built from the same three values as the parent's, so both read the same
virtual time; the child writes the test PKI and the data folder's settings.json, the parent
registers the scenario's companies from that PKI (``register_companies``, or
``register_companies_apart`` in a child process of its own, as a user registered them on another day)
and opens the real app over the folder. What the parent measures is then the app alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.clock import ScaledClock

if TYPE_CHECKING:
    from app.demo.memory_keyring import MemoryKeyring

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import argparse, json, sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.clock import ScaledClock

if TYPE_CHECKING:
    from app.demo.memory_keyring import MemoryKeyring
from app.sandbox.serve import serve
spec = json.loads(sys.argv[1])
clock = ScaledClock(spec["speed"], datetime.fromisoformat(spec["origin"]),
                    real_origin=datetime.fromisoformat(spec["real_origin"]))
args = argparse.Namespace(host="127.0.0.1", port=0, scenario=Path(spec["scenario"]), pki_dir=Path(spec["pki"]),
                          write_settings=Path(spec["data_dir"]), speed=spec["speed"], backlog=spec["backlog"],
                          seed=spec["seed"])
serve(args, clock=clock, ready=lambda sandbox, run: Path(spec["ready"]).write_text("ok"))
"""


@dataclass
class RemoteSandbox:
    process: subprocess.Popen[bytes] | None
    data_dir: Path
    pki_dir: Path
    clock: ScaledClock

    def rss_mb(self) -> float:
        assert self.process is not None, "a sandbox handle without its process"
        with open(f"/proc/{self.process.pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@contextmanager
def remote_sandbox(
    root: Path,
    *,
    companies: int,
    speed: float,
    nfe_per_day: float,
    origin: datetime,
    backlog_hours: float = 0.0,
    seed: int = 20,
) -> Iterator[RemoteSandbox]:
    """The sandbox serving ``companies`` on HTTPS from a child process; stopped (SIGINT) on exit."""
    data_dir, pki_dir = root / "dados", root / "pki"
    data_dir.mkdir(parents=True)
    scenario = root / "cenario.json"
    scenario.write_text(
        json.dumps(
            {"companies": companies, "seed": seed, "nfe_per_day": nfe_per_day, "cte_per_day": 0, "nfse_per_day": 0}
        ),
        encoding="utf-8",
    )
    real_origin = datetime.now(UTC) + timedelta(seconds=1)
    clock = ScaledClock(speed, origin, real_origin=real_origin)
    ready = root / "sandbox-ready"
    spec = {
        "speed": speed, "origin": origin.isoformat(), "real_origin": real_origin.isoformat(),
        "scenario": str(scenario), "pki": str(pki_dir), "data_dir": str(data_dir), "backlog": backlog_hours,
        "seed": seed, "ready": str(ready),
    }  # fmt: skip
    log = open(root / "sandbox.log", "wb")  # the child keeps its own descriptor
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(spec)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    log.close()
    try:
        deadline = time.monotonic() + 300
        while not ready.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the sandbox did not start: {(root / 'sandbox.log').read_text()[-2000:]}")
            time.sleep(0.2)  # a benchmark's start-up, not a test
        yield RemoteSandbox(process, data_dir, pki_dir, clock)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def register_companies(sandbox: RemoteSandbox) -> list[int]:
    """Every company of the scenario, from its test .pfx, capturing NF-e in homologation."""
    from app.capture.office import Office
    from app.core.products import Environment, Product
    from app.store.records import CaptureSettings

    ids = []
    listed = json.loads((sandbox.pki_dir / "companies.json").read_text(encoding="utf-8"))
    with Office(sandbox.data_dir, clock=sandbox.clock) as office:
        for entry in listed:
            pfx = (sandbox.pki_dir / entry["pfx"]).read_bytes()
            company = office.register_company(
                pfx, entry["password"], environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
            )
            office.companies.save_settings(
                CaptureSettings(company.id, Product.NFE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
            )
            ids.append(company.id)
    return ids


_REGISTER_CHILD = r"""
import json, sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.clock import ScaledClock

if TYPE_CHECKING:
    from app.demo.memory_keyring import MemoryKeyring
from tests.benchmarks.standin import use_memory_keyring
from tests.support.remote_sandbox import RemoteSandbox, register_companies
spec = json.loads(sys.argv[1])
ring = use_memory_keyring()
clock = ScaledClock(spec["factor"], datetime.fromisoformat(spec["origin"]),
                    real_origin=datetime.fromisoformat(spec["real_origin"]))
register_companies(RemoteSandbox(None, Path(spec["data_dir"]), Path(spec["pki"]), clock))
print(json.dumps([[service, user, secret] for (service, user), secret in ring._secrets.items()]))
"""


def register_companies_apart(sandbox: RemoteSandbox, ring: MemoryKeyring) -> None:
    """``register_companies`` run in a child process: the data folder created, migrated and filled
    there, as by the user on another day, so this process starts over an existing folder as the
    tray does each morning (the creation's migration and the 200 certificates read are not its
    footprint). The child's throwaway keyring secrets come back through its stdout into ``ring``
    (this process's in-memory keyring, tests/benchmarks/standin.py): never a disk, never a real keyring."""
    clock = sandbox.clock
    spec = {
        "factor": clock.factor, "origin": clock.origin.isoformat(), "real_origin": clock.real_origin.isoformat(),
        "data_dir": str(sandbox.data_dir), "pki": str(sandbox.pki_dir),
    }  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _REGISTER_CHILD, json.dumps(spec)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"registering the companies failed: {done.stderr[-2000:]}")
    for service, user, secret in json.loads(done.stdout.strip().splitlines()[-1]):
        ring.set_password(service, user, secret)
