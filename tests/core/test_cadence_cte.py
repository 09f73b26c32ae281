"""The CT-e answer policy (seed 000 §5.2-5.3) beside NF-e's, and the archive decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.archive import archive_exchange
from app.core.cadence import CTE_RULES, NFE_RULES, SAFETY_MARGIN, Action, CaptureState, decide
from app.core.cadence_an import DistributionResult, apply_distribution, policy_for
from app.core.cadence_cte import apply_cte_distribution
from app.core.cadence_nfe import apply_nfe_distribution
from app.core.cstat import CONSUMO_INDEVIDO, NSU_ABOVE_MAX
from app.core.products import Product

HOUR = timedelta(hours=1)
T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)


def _cte(**kw: int) -> CaptureState:
    return CaptureState(7, Product.CTE, **kw)  # type: ignore[arg-type]


def test_each_product_has_its_policy() -> None:
    assert policy_for(Product.NFE) is apply_nfe_distribution
    assert policy_for(Product.CTE) is apply_cte_distribution
    assert CTE_RULES.scheduler_cycle == timedelta(seconds=60) and CTE_RULES.call_timeout == timedelta(minutes=5)


def test_a_cte_656_follows_the_nfe_rule_the_cursor_jumps_and_the_skipped_nsus_become_gaps() -> None:
    # Issue 22: keeping the cursor met a 656 every hour for ever; the rule book is silent on CT-e,
    # so NF-e's §4.3 item 8 applies (a product decision).
    state = _cte(ult_nsu=10, max_nsu=10)
    result = DistributionResult(CONSUMO_INDEVIDO, "Consumo indevido", dh_resp=T0, ult_nsu=40, max_nsu=45)
    t = apply_distribution(state, CTE_RULES, T0, result)
    assert (t.state.ult_nsu, t.state.max_nsu) == (40, 45)
    assert t.gap_nsus == tuple(range(11, 41))
    assert t.state.blocked_until == t.state.point_queries_blocked_until == T0 + HOUR + SAFETY_MARGIN
    assert t.other_consumer is not None and (t.other_consumer.from_nsu, t.other_consumer.to_nsu) == (10, 40)
    assert t.other_consumer.skipped == t.other_consumer.queued == 30
    decision = decide(t.state, CTE_RULES, T0 + HOUR, global_pause_until=None, certificate_problem=None, enabled=True)
    assert decision.action is Action.BLOCKED and "outro sistema consulta as CT-e" in decision.reason
    after = decide(
        t.state, CTE_RULES, T0 + HOUR + SAFETY_MARGIN, global_pause_until=None, certificate_problem=None, enabled=True
    )
    assert after.query and after.ult_nsu == 40
    nfe = apply_distribution(CaptureState(7, Product.NFE, ult_nsu=10, max_nsu=10), NFE_RULES, T0, result)
    assert (nfe.state.ult_nsu, nfe.gap_nsus) == (t.state.ult_nsu, t.gap_nsus)  # the same rule


def test_a_cte_589_is_a_block_with_an_alert_and_108_a_global_pause() -> None:
    t = apply_distribution(_cte(ult_nsu=900), CTE_RULES, T0, DistributionResult(NSU_ABOVE_MAX, "NSU", dh_resp=T0))
    assert t.state.blocked_until is not None and t.alert is not None and "589" in t.alert
    paused = apply_distribution(_cte(), CTE_RULES, T0, DistributionResult(108, "Paralisado", dh_resp=T0))
    assert paused.global_pause is not None and paused.global_pause.until == T0 + timedelta(minutes=5) + SAFETY_MARGIN


def test_a_cte_137_advances_the_cursor_and_waits_the_hour_138_below_max_chains() -> None:
    empty = apply_distribution(_cte(ult_nsu=5), CTE_RULES, T0, DistributionResult(137, "Nada", T0, 9, 9))
    assert empty.state.ult_nsu == 9 and empty.state.next_query_at == T0 + HOUR + SAFETY_MARGIN
    lot = apply_distribution(_cte(), CTE_RULES, T0, DistributionResult(138, "Ok", T0, 50, 80, tuple(range(1, 51))))
    assert lot.chain_immediately and lot.state.ult_nsu == 50


@pytest.mark.parametrize(
    ("product", "cstat", "documents", "archived"),
    [
        (Product.NFE, 138, True, True),
        (Product.NFE, 137, False, False),
        (Product.NFE, 656, False, False),  # §4.3 item 4: rejections except 656
        (Product.NFE, 589, False, True),
        (Product.CTE, 137, False, True),  # §5.3 item 3: every request and response
        (Product.CTE, 656, False, True),
        (Product.NFSE, 138, True, False),
    ],
)
def test_what_is_archived(product: Product, cstat: int, documents: bool, archived: bool) -> None:
    assert archive_exchange(product, cstat, has_documents=documents) is archived
