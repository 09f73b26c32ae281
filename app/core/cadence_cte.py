"""The CT-e answer policy (CTeDistribuicaoDFe distNSU), rule book §5.2-5.3; NT 2015.002.

Item 4/5: 138 and 137 move the cursor forward (the engine commits it only with the whole lot),
chain while ultNSU < maxNSU, wait 1 h when the queue ends. Item 6: 108/109 pause every company
5/20 min. Item 7: any other rejection blocks the company 1 h. A 656 on distNSU follows the NF-e
rule (§4.3 item 8, a product decision: §5.3 is silent, issue 22): blocked 1 h, the cursor moves
forward to the ultNSU it carries and the NSUs another system took are recovered by consNSU;
keeping the cursor met a 656 every hour for ever. Item 8: 589 (NSU above the maximum) is a
critical alert the user sees.
"""

from __future__ import annotations

from app.core.cadence_soap import apply_soap_distribution

# The state after a CT-e distNSU answer that arrived at ``now`` (our clock), and its effects:
# the SOAP rules, shared with the other distNSU product.
apply_cte_distribution = apply_soap_distribution
