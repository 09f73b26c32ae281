"""The event types (``tpEvento``) this app acts on, named once.

NF-e and CT-e share the emitter's codes (MOC 7.0 §5.8, MOC CT-e §4.7); the recipient
manifestation is NT 2020.001; the NFS-e Nacional's are its ``pedRegEvento`` groups ``eNNNNNN``
(protocol.md §4.6). Every module that tests or writes an event type names it from here.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------- NF-e and CT-e (the emitter's)
CANCELLATION: Final = "110111"
CANCELLATION_BY_SUBSTITUTION: Final = "110112"  # NF-e only
CORRECTION_LETTER: Final = "110110"  # CC-e
CTE_SERVICE_DISAGREEMENT: Final = "610110"  # CT-e: Prestação do Serviço em Desacordo (by the taker)
# Both cancel the document; the order is the one the SQL ``IN`` lists are built from.
CANCELLATIONS: Final = (CANCELLATION, CANCELLATION_BY_SUBSTITUTION)

# ---------------------------------------------------------------- NF-e recipient manifestation
CONFIRMACAO: Final = "210200"
CIENCIA: Final = "210210"
DESCONHECIMENTO: Final = "210220"
NAO_REALIZADA: Final = "210240"

# ---------------------------------------------------------------- NFS-e Nacional
NFSE_CANCELLATION: Final = "101101"
NFSE_CANCELLATION_BY_SUBSTITUTION: Final = "105102"
NFSE_CANCELLATION_GRANTED: Final = "105104"  # deferred after the tax office's analysis
NFSE_CANCELLATION_EX_OFFICIO: Final = "305101"
# The ones that end an NFS-e's validity; the substitution also names the substitute.
NFSE_CANCELLING: Final = frozenset(
    {NFSE_CANCELLATION, NFSE_CANCELLATION_BY_SUBSTITUTION, NFSE_CANCELLATION_GRANTED, NFSE_CANCELLATION_EX_OFFICIO}
)
CONFIRMACAO_TOMADOR: Final = "203202"
REJEICAO_TOMADOR: Final = "203206"
