"""Crash safety under many kills: ``capture --daemon`` killed with SIGKILL N times (issue 5).

    .venv/bin/python tests/benchmarks/bench_crash.py [--kills 60] [--seed 1] [--companies 3] [--factor 1800]

The same rig as tests/capture/test_crash.py (see tests/support/crash.py): the sandbox over real
mutual TLS in this process on a sped-up clock, the service in a child process killed during
start-up, at random, right after an answer, and in the middle of chained lots, restarted each
time; then one clean life until the store has every published NSU and a graceful stop. POSIX
only (SIGKILL). Works in a temporary folder, removed at the end unless ``--keep``.

Prints human lines, then ONE JSON object as the last line: kills, restarts, published, stored,
lost, duplicated, cursor_regressions, violations, wall_seconds (and a few more).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.crash import CrashPlan, run_crash  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=60, help="SIGKILLs before the clean life (default 60)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--companies", type=int, default=3)
    parser.add_argument("--factor", type=float, default=1800.0, help="virtual seconds per real second")
    parser.add_argument("--keep", action="store_true", help="keep the data folder and the children's logs")
    opts = parser.parse_args(argv)
    if sys.platform == "win32":
        print("bench_crash: SIGKILL is POSIX-only", file=sys.stderr)
        return 2

    root = Path(tempfile.mkdtemp(prefix="bench-crash-"))
    plan = CrashPlan(
        kills=opts.kills,
        seed=opts.seed,
        companies=opts.companies,
        factor=opts.factor,
        catch_up_timeout=max(60.0, 240.0 * 1800 / opts.factor / 4),
    )
    try:
        outcome = run_crash(root, plan)
    finally:
        if not opts.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"{outcome.kills} kills ({dict(outcome.modes)}), {outcome.answers_lost} answers lost with their child "
        f"({outcome.chains_cut} in chained lots); final life caught up in {outcome.catch_up_seconds:.1f}s"
    )
    print(
        f"published {outcome.published}, stored {outcome.stored}, lost {len(outcome.lost)} {outcome.lost[:5]}, "
        f"duplicated {outcome.duplicated}"
    )
    for line in outcome.cursor_regressions + outcome.asked_regressions:
        print(f"cursor went backwards: {line}")
    for violation in outcome.violations:
        print(f"violation: {violation['rule']} {violation['cnpj']} at {violation['at']}: {violation['detail']}")
    if outcome.manifestations_stuck:
        print(f"{outcome.manifestations_stuck} manifestation(s) left 'sent' by a kill and never settled")
    if opts.keep:
        print(f"kept in {root}")
    print(json.dumps(outcome.to_json()))
    ok = (
        outcome.caught_up
        and not outcome.lost
        and not outcome.duplicated
        and not outcome.cursor_regressions
        and not outcome.asked_regressions
        and not outcome.violations
    )
    return 0 if ok else 1


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    sys.exit(main())
