"""CT-e: another system takes NSUs in the middle of our chain (issue 22), over mutual TLS.

The rule book is silent on a CT-e 656 (§5.3 item 7 only blocks for an hour); keeping the cursor
met a 656 every hour for ever. The NF-e rule applies (a product decision): the cursor jumps to the
656's ultNSU, and the NSUs the other system took come back by consNSU within the quota (§5.5).
"""

from __future__ import annotations

from pathlib import Path

from app.core.products import Product
from tests.support.other_consumer import FIRST, TAKEN, run


def test_another_system_takes_cte_nsus_and_we_lose_nothing(tmp_path: Path) -> None:
    outcome = run(tmp_path, Product.CTE)
    # One 656, not one an hour: after the jump our distNSU is in sequence again.
    ours = [
        r
        for r in outcome.fleet.sandbox.referee.requests
        if r.service == "cte_dist" and not r.competitor and r.operation == "distNSU"
    ]
    assert sum(1 for r in ours if r.cstat == 656) == 1
    assert ours[-1].cstat == 137 and ours[-1].summary["asked"] == FIRST + TAKEN
