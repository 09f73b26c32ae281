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

# ---------------------------------------------------------------- the consumption-tax reform (NT 2025.002-RTC)
# The app sends none of these yet; they arrive in an NF-e's distribution and must be named.
EVENT_CANCELLATION: Final = "110001"  # Cancelamento de Evento (of a reform event)
# The emitter's (fornecedor)
PAYMENT_FOR_PRESUMED_CREDIT: Final = "112110"
ALC_ZFM_IMPORT_NOT_EXEMPT: Final = "112120"
LOSS_IN_SUPPLIER_TRANSPORT: Final = "112130"
PREPAID_SUPPLY_NOT_MADE: Final = "112140"
DELIVERY_FORECAST_UPDATE: Final = "112150"
# The acquirer's (adquirente)
PRESUMED_CREDIT_APPROPRIATION: Final = "211110"
PERSONAL_CONSUMPTION: Final = "211120"
LOSS_IN_ACQUIRER_TRANSPORT: Final = "211124"
CREDIT_NOTE_DEBIT_ACCEPTED: Final = "211128"
ITEM_IMMOBILISATION: Final = "211130"
FUEL_CREDIT_APPROPRIATION: Final = "211140"
ACTIVITY_CREDIT_APPROPRIATION: Final = "211150"
# The successor company's (tpAutor 8) on a transfer of credit in a succession (NT 2024.002 §10.2.9-10)
IBS_SUCCESSION_TRANSFER: Final = "212110"
CBS_SUCCESSION_TRANSFER: Final = "212120"
# The tax office's on the same requests (NT 2025.002-RTC v1.31 §8.1, §8.12-8.13; author: Fisco)
FISCO_IBS_SUCCESSION_TRANSFER: Final = "412120"
FISCO_CBS_SUCCESSION_TRANSFER: Final = "412130"

# ---------------------------------------------------------------- names
# What the timeline shows for a type whose XML carries no description (or carries it abbreviated).
EVENT_NAMES: Final[dict[str, str]] = {
    CANCELLATION: "Cancelamento",
    CANCELLATION_BY_SUBSTITUTION: "Cancelamento por substituição",
    CORRECTION_LETTER: "Carta de Correção",
    CTE_SERVICE_DISAGREEMENT: "Prestação do Serviço em Desacordo",
    CONFIRMACAO: "Confirmação da Operação",
    CIENCIA: "Ciência da Operação",
    DESCONHECIMENTO: "Desconhecimento da Operação",
    NAO_REALIZADA: "Operação não Realizada",
    NFSE_CANCELLATION: "Cancelamento de NFS-e",
    NFSE_CANCELLATION_BY_SUBSTITUTION: "Cancelamento de NFS-e por substituição",
    NFSE_CANCELLATION_GRANTED: "Cancelamento de NFS-e deferido por análise fiscal",
    NFSE_CANCELLATION_EX_OFFICIO: "Cancelamento de NFS-e de ofício",
    CONFIRMACAO_TOMADOR: "Confirmação do Tomador",
    REJEICAO_TOMADOR: "Rejeição do Tomador",
    EVENT_CANCELLATION: "Cancelamento de Evento",
    PAYMENT_FOR_PRESUMED_CREDIT: (
        "Informação de efetivo pagamento integral para liberar crédito presumido do adquirente"
    ),
    ALC_ZFM_IMPORT_NOT_EXEMPT: "Importação em ALC/ZFM não convertida em isenção",
    LOSS_IN_SUPPLIER_TRANSPORT: "Perecimento, perda, roubo ou furto durante o transporte contratado pelo fornecedor",
    PREPAID_SUPPLY_NOT_MADE: "Fornecimento não realizado com pagamento antecipado",
    DELIVERY_FORECAST_UPDATE: "Atualização da data de previsão de entrega",
    PRESUMED_CREDIT_APPROPRIATION: "Solicitação de apropriação de crédito presumido",
    PERSONAL_CONSUMPTION: "Destinação de item para consumo pessoal",
    LOSS_IN_ACQUIRER_TRANSPORT: "Perecimento, perda, roubo ou furto durante o transporte contratado pelo adquirente",
    CREDIT_NOTE_DEBIT_ACCEPTED: "Aceite de débito na apuração por emissão de nota de crédito",
    ITEM_IMMOBILISATION: "Imobilização de item",
    FUEL_CREDIT_APPROPRIATION: "Solicitação de apropriação de crédito de combustível",
    ACTIVITY_CREDIT_APPROPRIATION: (
        "Solicitação de apropriação de crédito para bens e serviços que dependem de atividade do adquirente"
    ),
    IBS_SUCCESSION_TRANSFER: "Manifestação sobre pedido de transferência de crédito de IBS em operações de sucessão",
    CBS_SUCCESSION_TRANSFER: "Manifestação sobre pedido de transferência de crédito de CBS em operações de sucessão",
    FISCO_IBS_SUCCESSION_TRANSFER: (
        "Manifestação do Fisco sobre pedido de transferência de crédito de IBS em operações de sucessão"
    ),
    FISCO_CBS_SUCCESSION_TRANSFER: (
        "Manifestação do Fisco sobre pedido de transferência de crédito de CBS em operações de sucessão"
    ),
}


def event_name(tp_evento: str, description: str | None = None) -> str:
    """The event's name: ``description`` (from its XML) when given, else the known name, else
    "Evento NNNNNN" (a type no table here knows yet is still shown, never dropped)."""
    if description and description.strip():
        return description.strip()
    return EVENT_NAMES.get(tp_evento, f"Evento {tp_evento}")
