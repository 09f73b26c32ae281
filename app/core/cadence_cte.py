"""The CT-e answer policy (CTeDistribuicaoDFe distNSU), rule book §5.2-5.3; NT 2015.002.

Item 4/5: 138 and 137 move the cursor forward (the engine commits it only with the whole lot),
chain while ultNSU < maxNSU, wait 1 h when the queue ends. Item 6: 108/109 pause every company
5/20 min. Item 7: any other rejection, 656 included, blocks the company 1 h, and nothing else: the
CT-e 656 carries no cursor to jump to, unlike NF-e's. Item 8: 589 (NSU above the maximum) is a
critical alert the user sees.
"""

from __future__ import annotations

from datetime import datetime

from app.core.cadence import CadenceRules, CaptureState, CommunicationFailure, Transition, answered
from app.core.cadence_soap import DistributionResult, after_documents, after_failure, after_outage, after_rejection
from app.core.cstat import ANSWERED


def apply_cte_distribution(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: DistributionResult | CommunicationFailure,
) -> Transition:
    """The state after a CT-e distNSU answer that arrived at ``now`` (our clock), and its effects."""
    if isinstance(result, CommunicationFailure):
        return after_failure(state, rules, now, result)
    base = answered(state, now, result.dh_resp, str(result.cstat), result.xmotivo)
    if result.cstat in ANSWERED:
        return after_documents(base, state, rules, now, result)
    pause = rules.outage_pause(result.cstat)
    if pause is not None:
        return after_outage(base, rules, now, result, pause)
    return after_rejection(base, rules, now, result)
