"""The cStat values of the SOAP distribution services (NF-e and CT-e), named once.

Rule book §3.2/§3.3 and §4.3/§5.3; NT 2014.002 (NF-e) and NT 2015.002 (CT-e). Every module that
reads a ``retDistDFeInt`` or a recovery's answer names these instead of writing the numbers.
"""

from __future__ import annotations

from typing import Final

NO_DOCUMENTS: Final = 137  # nenhum documento localizado (also: this NSU does not exist)
DOCUMENTS_FOUND: Final = 138  # documento(s) localizado(s)
SERVICE_PAUSED: Final = 108  # serviço paralisado momentaneamente
SERVICE_DOWN: Final = 109  # serviço paralisado sem previsão
KEY_NOT_FOUND: Final = 217  # NF-e inexistente para a chave (consChNFe)
NSU_ABOVE_MAX: Final = 589  # NSU informado superior ao maior NSU da base
CONSUMO_INDEVIDO: Final = 656  # consumo indevido

ANSWERED: Final = frozenset({NO_DOCUMENTS, DOCUMENTS_FOUND})  # an answer that is not a rejection
OUTAGES: Final = frozenset({SERVICE_PAUSED, SERVICE_DOWN})


def is_rejection(cstat: int) -> bool:
    """Anything but 137/138 is a rejection of the request (outages and 656 included)."""
    return cstat not in ANSWERED
