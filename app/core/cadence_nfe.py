"""The NF-e answer policy (NFeDistribuicaoDFe distNSU), rule book §4.3; NT 2014.002.

Like every SOAP answer (:mod:`app.core.cadence_soap`); the 656 (item 8) blocks the CNPJ and its
point queries 1 h and carries the CNPJ's last ultNSU, to which the cursor moves (only forward);
what another system consumed in between becomes gap recoveries (``after_consumo_indevido``).
"""

from __future__ import annotations

from datetime import datetime

from app.core.cadence import CadenceRules, CaptureState, CommunicationFailure, Transition
from app.core.cadence_soap import DistributionResult, apply_soap_distribution


def apply_nfe_distribution(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: DistributionResult | CommunicationFailure,
) -> Transition:
    """The state after a NF-e distNSU answer that arrived at ``now`` (our clock), and its effects."""
    return apply_soap_distribution(state, rules, now, result)
