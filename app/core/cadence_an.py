"""NF-e and CT-e distribution answers (Ambiente Nacional, distNSU) applied to the capture state.

The policy of each product (:mod:`app.core.cadence_nfe`, :mod:`app.core.cadence_cte`) over the
bookkeeping they share (:mod:`app.core.cadence_soap`); ``apply_distribution`` picks it from the
rules' product. Rule book §4.3 (NF-e) and §5.3 (CT-e).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from app.core.cadence import CadenceRules, CaptureState, CommunicationFailure, Transition
from app.core.cadence_cte import apply_cte_distribution
from app.core.cadence_nfe import apply_nfe_distribution
from app.core.cadence_soap import DistributionResult, apply_point_query_block
from app.core.cstat import CONSUMO_INDEVIDO, DOCUMENTS_FOUND, NO_DOCUMENTS, NSU_ABOVE_MAX
from app.core.products import Product

__all__ = [
    "CONSUMO_INDEVIDO",
    "DOCUMENTS_FOUND",
    "NO_DOCUMENTS",
    "NSU_ABOVE_MAX",
    "AnswerPolicy",
    "DistributionResult",
    "apply_cte_distribution",
    "apply_distribution",
    "apply_nfe_distribution",
    "apply_point_query_block",
    "policy_for",
]

AnswerPolicy = Callable[[CaptureState, CadenceRules, datetime, DistributionResult | CommunicationFailure], Transition]

_POLICIES: dict[Product, AnswerPolicy] = {Product.NFE: apply_nfe_distribution, Product.CTE: apply_cte_distribution}


def policy_for(product: Product) -> AnswerPolicy:
    """The answer policy of a SOAP distribution product (NF-e, CT-e)."""
    return _POLICIES[product]


def apply_distribution(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: DistributionResult | CommunicationFailure,
) -> Transition:
    """The state after a distNSU answer that arrived at ``now`` (our clock), by the rules' product."""
    return policy_for(rules.product)(state, rules, now, result)
