"""The cStat values of the SOAP services (NF-e and CT-e), named once.

Distribution: rule book §3.2/§3.3 and §4.3/§5.3; NT 2014.002 (NF-e) and NT 2015.002 (CT-e).
Event reception (``retEnvEvento``, ``retEvento``): MOC 7.0 §5.8, protocol.md §3.4. Every module
that reads a ``retDistDFeInt``, a recovery's answer or an event's result names these instead of
writing the numbers.
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

# ---------------------------------------------------------------- event reception
LOT_PROCESSED: Final = 128  # lote de evento processado: the lot's status, never an event's result
EVENT_LINKED: Final = 135  # evento registrado e vinculado ao documento
EVENT_NOT_LINKED: Final = 136  # evento registrado, mas não vinculado (document not yet at the AN)
CANCELLATION_LATE: Final = 155  # cancelamento homologado fora de prazo: registered all the same
EVENT_DUPLICATE: Final = 573  # duplicidade de evento: registered before, i.e. done

EVENT_REGISTERED: Final = frozenset({EVENT_LINKED, EVENT_NOT_LINKED})
CANCELLATION_REGISTERED: Final = EVENT_REGISTERED | {CANCELLATION_LATE}
# As the stored XML and the store's rows write them.
CANCELLATION_REGISTERED_TEXT: Final = frozenset(str(cstat) for cstat in CANCELLATION_REGISTERED)
EVENT_REGISTERED_TEXT: Final = frozenset(str(cstat) for cstat in EVENT_REGISTERED)


def is_rejection(cstat: int) -> bool:
    """Anything but 137/138 is a rejection of the request (outages and 656 included)."""
    return cstat not in ANSWERED
