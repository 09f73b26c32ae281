"""NF-e: another system takes NSUs in the middle of our chain (issue 22), over mutual TLS.

Our next distNSU meets the 656, the cursor jumps to its ultNSU (rule book §4.3 item 8), the NSUs
the other system took come back by consNSU within the 20-per-hour quota (§4.6, §4.7), and the
company's state, its status JSON and a notification say what happened.
"""

from __future__ import annotations

from pathlib import Path

from app.core.products import Product
from tests.support.other_consumer import FIRST, TAKEN, run


def test_another_system_takes_nfe_nsus_and_we_lose_nothing(tmp_path: Path) -> None:
    outcome = run(tmp_path, Product.NFE)
    # NF-e's point queries share the CNPJ's quota with consChNFe: still within it, nothing else ran.
    assert outcome.ult_before == FIRST and len(outcome.consnsu_hits) == TAKEN
