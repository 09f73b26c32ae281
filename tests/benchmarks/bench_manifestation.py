"""Cost of one manifestation send on the client side (issue 5, helper H3).

    .venv/bin/python tests/benchmarks/bench_manifestation.py [--n 200] [--rounds 3]

A data folder wired to the in-process sandbox (``tests.support.nfe_harness``) on a FakeClock:
``--n`` NF-e published to the recipient, captured, their automatic Ciências come due and ONE
dispatch loop sends them all. Measured in CPU time of this process (``time.process_time``, so
other processes on the machine disturb it less than wall time):

- ``client_ms``: per send, everything but the sandbox's handling (``InProcessTransport.handle_request``
  is timed and subtracted): reads of the pass, signing, the claim, the lot, the answer's unit of work;
- ``sandbox_ms``: per send, the sandbox's side;
- ``idle_step_us``: a scheduler step with nothing due (``dispatch`` + ``next_due_at``).

The best of ``--rounds`` rounds. Prints human lines, then ONE JSON object as the last line.
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

import httpx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.sandbox.transport import InProcessTransport  # noqa: E402
from app.store.records import ManifestationStatus  # noqa: E402
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, nfe_harness  # noqa: E402

IDLE_STEPS = 2000


def one_round(n: int) -> dict[str, float]:
    spent = [0.0]
    handle = InProcessTransport.handle_request

    def timed(self: InProcessTransport, request: httpx.Request) -> httpx.Response:
        started = time.process_time()
        try:
            return handle(self, request)
        finally:
            spent[0] += time.process_time() - started

    with tempfile.TemporaryDirectory() as tmp, nfe_harness(Path(tmp), in_process=True) as h:
        h.settings(auto_ciencia=True, ciencia_wait_minutes=10)
        for _ in range(n):
            h.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
        for _ in range(n // 50 + 2):  # 50 documents per distNSU lot, an hour between lots
            h.capture.distribution.run_company(h.company.id)
            h.clock.advance(timedelta(hours=1, seconds=1))
        due = len(h.ctx.manifestations.due(h.clock.now(), limit=n + 1))
        InProcessTransport.handle_request = timed  # type: ignore[method-assign]
        try:
            started = time.process_time()
            sent = 0
            while sent < due:
                done = h.capture.manifestation.dispatch()
                if not done:
                    break
                sent += done
            total = time.process_time() - started
        finally:
            InProcessTransport.handle_request = handle  # type: ignore[method-assign]
        with h.ctx.db.read_connection() as connection:
            ok = connection.exec_driver_sql(
                "SELECT count(*) FROM manifestations WHERE status = ?", (ManifestationStatus.ACCEPTED.value,)
            ).scalar()
        if not sent or ok != sent:
            raise SystemExit(f"only {ok} of {sent} sends accepted ({due} due)")
        started = time.process_time()
        for _ in range(IDLE_STEPS):
            h.capture.manifestation.dispatch()
            h.capture.manifestation.next_due_at()
        idle = (time.process_time() - started) / IDLE_STEPS
    return {
        "sends": sent,
        "client_ms": (total - spent[0]) / sent * 1e3,
        "sandbox_ms": spent[0] / sent * 1e3,
        "idle_step_us": idle * 1e6,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="Ciências sent per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rounds = []
    for index in range(args.rounds):
        result = one_round(args.n)
        rounds.append(result)
        print(
            f"round {index + 1}: {result['sends']} sends, client {result['client_ms']:.3f} ms/send, "
            f"sandbox {result['sandbox_ms']:.3f} ms/send, idle step {result['idle_step_us']:.1f} us"
        )
    best = {
        "benchmark": "manifestation",
        "n": args.n,
        "rounds": args.rounds,
        "client_ms": round(min(r["client_ms"] for r in rounds), 3),
        "sandbox_ms": round(min(r["sandbox_ms"] for r in rounds), 3),
        "idle_step_us": round(min(r["idle_step_us"] for r in rounds), 1),
    }
    print(json.dumps(best))
    return best


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    main()
