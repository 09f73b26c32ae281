"""The sandbox in a process of its own, on the app's sped-up clock (benchmarks of the app's footprint).

``remote_sandbox`` starts ``sandbox serve`` (``app.sandbox.serve.serve``) in a child process with a
:class:`ScaledClock` built from the same three values as the parent's, so both read the same
virtual time; the child writes the test PKI and the data folder's settings.json, the parent
registers the scenario's companies from that PKI (``register_companies``) and opens the real app
over the folder. What the parent measures is then the app alone.
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

from app.core.clock import ScaledClock

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import argparse, json, sys
from datetime import datetime
from pathlib import Path
from app.core.clock import ScaledClock
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
    process: subprocess.Popen[bytes]
    data_dir: Path
    pki_dir: Path
    clock: ScaledClock

    def rss_mb(self) -> float:
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
