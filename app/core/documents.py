"""What a stored fiscal document is, who holds which role in it, and which way it goes.

Shared vocabulary of the readers (app.documents), the store and the UI; the values are what the
database stores.
"""

from __future__ import annotations

from enum import StrEnum


class DocumentKind(StrEnum):
    """Decided by a document's root element, never by the name a service announces."""

    RES_NFE = "resNFe"
    NFE_PROC = "nfeProc"
    RES_EVENTO = "resEvento"
    PROC_EVENTO_NFE = "procEventoNFe"
    CTE_PROC = "cteProc"
    PROC_EVENTO_CTE = "procEventoCTe"
    NFSE = "nfse"
    NFSE_EVENTO = "nfse_evento"
    DPS = "dps"
    UNKNOWN = "unknown"


class DocumentStatus(StrEnum):
    AUTHORISED = "authorised"
    CANCELLED = "cancelled"
    DENIED = "denied"
    SUMMARY = "summary"  # only the summary (resNFe) is known
    UNKNOWN = "unknown"


class PartyRole(StrEnum):
    EMITTER = "emitter"
    RECIPIENT = "recipient"
    TRANSPORTER = "transporter"
    TAKER = "taker"
    SENDER = "sender"  # CT-e remetente
    SHIPPER = "shipper"  # CT-e expedidor
    RECEIVER = "receiver"  # CT-e recebedor
    INTERMEDIARY = "intermediary"  # NFS-e intermediário
    AUTHORISED = "authorised"  # autXML: a third party allowed to fetch the XML


class Direction(StrEnum):
    """Issued by the company itself only when it holds no other role in the document."""

    RECEIVED = "received"
    EMITTED = "emitted"


# The Portuguese word the window, the command line and the reports show for each value.
STATUS_LABELS = {
    DocumentStatus.AUTHORISED: "autorizada",
    DocumentStatus.CANCELLED: "cancelada",
    DocumentStatus.DENIED: "denegada",
    DocumentStatus.SUMMARY: "resumo",
    DocumentStatus.UNKNOWN: "desconhecida",
}
DIRECTION_LABELS = {Direction.RECEIVED: "recebida", Direction.EMITTED: "emitida"}
