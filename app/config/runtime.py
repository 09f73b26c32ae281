"""Process-wide runtime settings of the long-running app (GUI, daemon, demo)."""

from __future__ import annotations

import gc

# CPython's default first threshold (700 allocations) runs a young collection every few
# statements of a capture run; the service allocates mostly short-lived, acyclic objects that
# reference counting frees. 20,000 cuts the collections ~30-fold: about 1% of a month's
# simulation (tests/benchmarks/bench_month.py) for a few MB more held between collections.
GC_THRESHOLDS = (20_000, 20, 20)


def tune_garbage_collector() -> None:
    """Fewer cyclic-garbage collections for a service that runs for months."""
    gc.set_threshold(*GC_THRESHOLDS)
