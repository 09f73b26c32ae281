"""The NF-e answer policy (NFeDistribuicaoDFe distNSU), rule book §4.3; NT 2014.002.

Like every SOAP answer (:mod:`app.core.cadence_soap`); the 656 (item 8) blocks the CNPJ and its
point queries 1 h and carries the CNPJ's last ultNSU, to which the cursor moves (only forward);
what another system consumed in between becomes gap recoveries (``after_consumo_indevido``).
"""

from __future__ import annotations

from app.core.cadence_soap import apply_soap_distribution

# The state after a NF-e distNSU answer that arrived at ``now`` (our clock), and its effects:
# the SOAP rules, shared with the other distNSU product.
apply_nfe_distribution = apply_soap_distribution
