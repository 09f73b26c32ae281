"""The NF-e answer policy (NFeDistribuicaoDFe distNSU), rule book §4.3; NT 2014.002.

Like every SOAP answer (:mod:`app.core.cadence_soap`) except the 656 (item 8): it blocks the CNPJ
and its point queries 1 h, and carries the CNPJ's last ultNSU, to which the cursor moves (only
forward); what another system consumed in between becomes gap recoveries.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from app.core.cadence import CadenceRules, CaptureState, CommunicationFailure, Transition, after_service_mark, answered
from app.core.cadence import display_time as _display_time
from app.core.cadence_soap import (
    DistributionResult,
    after_documents,
    after_failure,
    after_outage,
    after_rejection,
    lot_gaps,
    move_forward,
)
from app.core.cstat import ANSWERED, CONSUMO_INDEVIDO


def apply_nfe_distribution(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: DistributionResult | CommunicationFailure,
) -> Transition:
    """The state after an NF-e distNSU answer that arrived at ``now`` (our clock), and its effects."""
    if isinstance(result, CommunicationFailure):
        return after_failure(state, rules, now, result)
    base = answered(state, now, result.dh_resp, str(result.cstat), result.xmotivo)
    if result.cstat in ANSWERED:
        return after_documents(base, state, rules, now, result)
    if result.cstat == CONSUMO_INDEVIDO:
        return _consumo_indevido(base, state, rules, now, result)
    pause = rules.outage_pause(result.cstat)
    if pause is not None:
        return after_outage(base, rules, now, result, pause)
    return after_rejection(base, rules, now, result)


def _consumo_indevido(
    base: CaptureState, old: CaptureState, rules: CadenceRules, now: datetime, result: DistributionResult
) -> Transition:
    # Since NT 2014.002 v1.14 the 656 carries the CNPJ's last ultNSU: continue from it (only
    # forward) and recover what another system consumed in between (field-lessons §4.2).
    ult, max_nsu = move_forward(old, result)
    gaps, gap_alert = lot_gaps(old, ult, result.received_nsus, nothing_sent=True)
    until = after_service_mark(rules, now, result.dh_resp, rules.block_duration)
    reason = f"{rules.service_label} bloqueou consultas até {_display_time(until, now)}: consumo indevido (cStat 656)."
    state = replace(
        base,
        ult_nsu=ult,
        max_nsu=max_nsu,
        blocked_until=until,
        block_reason=reason,
        point_queries_blocked_until=until,
        next_query_at=None,
        wait_reason=None,
    )
    alert = (
        f"Consumo indevido (cStat 656) na consulta de {rules.product.label}: verifique se outro sistema "
        "consulta o mesmo CNPJ."
    )
    if gap_alert:
        alert = f"{alert} {gap_alert}"
    return Transition(state, gap_nsus=gaps, alert=alert)
