"""What the capture node's fence costs a write transaction (issue 24).

    .venv/bin/python tests/benchmarks/bench_fence.py [--writes 2000] [--repeat 3] [--postgres]

Every write transaction of the node first checks, inside it, that the office's lease still
carries its token (app.store.lease.fence_in: one SELECT under the writer lock). Times one cursor
save (``CaptureStateRepository.save``: a ``write_driver`` transaction, the capture's hot path)
without and with the fence, on a SQLite file, and with ``--postgres`` also on a throwaway
PostgreSQL cluster (tests/support/postgres.py). Wall time per write, the best of ``--repeat``
rounds. Prints human lines, then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.clock import FakeClock  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.core.products import Product  # noqa: E402
from app.store.companies import CompanyRepository  # noqa: E402
from app.store.cursors import CaptureStateRepository  # noqa: E402
from app.store.db import open_database  # noqa: E402
from app.store.lease import NodeIdentity, NodeLeases, fence_in  # noqa: E402
from app.store.records import CaptureState  # noqa: E402


def _round_us(cursors: CaptureStateRepository, company_id: int, writes: int) -> float:
    started = time.perf_counter()
    for n in range(writes):
        cursors.save(CaptureState(company_id, Product.NFE, ult_nsu=n, max_nsu=writes))
    return (time.perf_counter() - started) / writes * 1e6


def measure(target: Path | str, writes: int, repeat: int) -> tuple[float, float]:
    """The best round without and with the fence, interleaved on one database (the machine's
    other load falls on both alike)."""
    clock = FakeClock()
    db = open_database(target, clock=clock)
    try:
        company = CompanyRepository(db).add(Cnpj.from_body("112223330001"), "Bench", certificate_ref=None)
        cursors = CaptureStateRepository(db)
        token = NodeLeases(db).acquire(NodeIdentity("b" * 32, "BENCH", 1), clock.now(), timedelta(seconds=60))
        assert token is not None
        unfenced = fenced = float("inf")
        for _ in range(repeat):
            db.fence = None
            unfenced = min(unfenced, _round_us(cursors, company.id, writes))
            db.fence = lambda driver: fence_in(driver, token)
            fenced = min(fenced, _round_us(cursors, company.id, writes))
        return unfenced, fenced
    finally:
        db.close()


def _record(result: dict[str, Any], engine: str, times: tuple[float, float]) -> None:
    unfenced, fenced = times
    result[f"{engine}_unfenced_us"] = round(unfenced, 1)
    result[f"{engine}_fenced_us"] = round(fenced, 1)
    result[f"{engine}_fence_us"] = round(fenced - unfenced, 1)
    print(f"{engine}: {unfenced:.1f} µs por gravação sem cerca, {fenced:.1f} µs com cerca")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="also on a throwaway PostgreSQL cluster")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"writes": args.writes}
    with tempfile.TemporaryDirectory(prefix="bench-fence-") as folder:
        _record(result, "sqlite", measure(Path(folder) / "captura.db", args.writes, args.repeat))
    if args.postgres:
        from tests.support.postgres import PostgresCluster

        cluster = PostgresCluster().start()
        try:
            _record(result, "postgresql", measure(cluster.new_database(), args.writes, args.repeat))
        finally:
            cluster.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
