"""What telling the office costs a write, and how soon another workstation hears it (issue 24).

    .venv/bin/python tests/benchmarks/bench_notify.py [--writes 500] [--repeat 3]

On a throwaway PostgreSQL cluster (tests/support/postgres.py), one ``Database`` writes and another
listens (app.store.notify). Times a one-statement ``write_driver`` transaction on a watched table
(it NOTIFYs inside the transaction) against the same on a table nobody watches (no NOTIFY),
interleaved, the best of ``--repeat`` rounds; then the delay from the start of a commit to the
moment the other ``Database``'s feed hands the change to its subscriber, one commit at a time.
Prints human lines, then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.clock import FakeClock  # noqa: E402
from app.store.db import Database, open_database  # noqa: E402
from app.store.notify import Change  # noqa: E402

WATCHED = "UPDATE documents SET product = product WHERE id = ?"
UNWATCHED = "UPDATE companies SET name = name WHERE id = ?"


def _round_us(db: Database, sql: str, writes: int) -> float:
    started = time.perf_counter()
    for _ in range(writes):
        with db.write_driver() as driver:
            driver.execute(sql, (-1,))
    return (time.perf_counter() - started) / writes * 1e6


def _latencies_ms(writer: Database, listener: Database, writes: int) -> list[float]:
    heard = threading.Event()

    def on_change(change: Change) -> None:
        if "documents" in change.tables:
            heard.set()

    assert listener.changes is not None
    listener.changes.subscribe(on_change)
    if not listener.changes.listening.wait(30):
        raise RuntimeError("the feed never listened")
    delays = []
    for _ in range(writes):
        heard.clear()
        started = time.perf_counter()
        with writer.write_driver() as driver:
            driver.execute(WATCHED, (-1,))
        if not heard.wait(10):
            raise RuntimeError("a commit was never heard")
        delays.append((time.perf_counter() - started) * 1e3)
    return delays


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from tests.support.postgres import PostgresCluster

    cluster = PostgresCluster().start()
    try:
        url = cluster.new_database()
        writer, listener = open_database(url, clock=FakeClock()), open_database(url, clock=FakeClock())
        try:
            quiet = told = float("inf")
            for _ in range(args.repeat):
                quiet = min(quiet, _round_us(writer, UNWATCHED, args.writes))
                told = min(told, _round_us(writer, WATCHED, args.writes))
            delays = sorted(_latencies_ms(writer, listener, args.writes))
        finally:
            writer.close()
            listener.close()
    finally:
        cluster.stop()
    p50, p95 = statistics.median(delays), delays[int(len(delays) * 0.95) - 1]
    print(f"gravação sem aviso {quiet:.1f} µs, com aviso {told:.1f} µs (+{told - quiet:.1f} µs)")
    print(f"ouvida pela outra estação em {p50:.2f} ms (mediana), {p95:.2f} ms (p95), máximo {delays[-1]:.2f} ms")
    result: dict[str, Any] = {
        "writes": args.writes,
        "write_quiet_us": round(quiet, 1),
        "write_told_us": round(told, 1),
        "notify_us": round(told - quiet, 1),
        "heard_p50_ms": round(p50, 2),
        "heard_p95_ms": round(p95, 2),
        "heard_max_ms": round(delays[-1], 2),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
