"""NFS-e taker manifestation rules (rule book §6.5; protocol.md §4.5): types, reasons, refusals, results.

Only the taker's two conclusive events exist here: Confirmação do Tomador (203202) and Rejeição do
Tomador (203206, with ``cMotivo`` and an ``xMotivo`` of 15-255 characters). Both are sent only on
the user's request (the NFS-e has no Ciência). The ``pedRegEvento`` Id is "PRE" + key + tpEvento,
as current production accepts (⚠ protocol.md §4.5: the older form with nPedRegEvento is refused).

A rejection's reason is kept in the request's one justification column as "{cMotivo} {xMotivo}"
(:func:`stored_reason` / :func:`read_reason`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from app.core.event_types import CONFIRMACAO_TOMADOR as CONFIRMACAO_TOMADOR
from app.core.event_types import REJEICAO_TOMADOR as REJEICAO_TOMADOR
from app.core.manifestation import InvalidManifestation, by_event_type, free_text, one_line

E_ONE_TAKER_MANIFESTATION = "E1833"  # one Confirmação OR one Rejeição per non-emitter
_KEY = re.compile(r"[0-9]{9}[0-9A-Z]{14}[0-9]{27}")  # lenient: protocol.md §4.8 (alphanumeric CNPJ)


@dataclass(frozen=True, slots=True)
class TakerEventType:
    """``x_desc`` is the schema's exact text (with accents), ``label`` the UI's."""

    tp_evento: str
    x_desc: str
    label: str
    with_reason: bool


TAKER_TYPES: dict[str, TakerEventType] = by_event_type(
    TakerEventType(
        CONFIRMACAO_TOMADOR, "Manifestação de NFS-e - Confirmação do Tomador", "Confirmação do Tomador", False
    ),
    TakerEventType(REJEICAO_TOMADOR, "Manifestação de NFS-e - Rejeição do Tomador", "Rejeição do Tomador", True),
)

# TSCodMotivoRejeicao (tiposEventos 1.01, e203206/infRej).
REJECTION_REASONS: dict[str, str] = {
    "1": "NFS-e em duplicidade",
    "2": "NFS-e já emitida pelo tomador",
    "3": "Não ocorrência do fato gerador",
    "4": "Erro quanto à responsabilidade tributária",
    "5": "Erro quanto ao valor do serviço, das deduções, ao serviço prestado ou à data do fato gerador",
    "9": "Outros",
}


def taker_type(tp_evento: str) -> TakerEventType:
    try:
        return TAKER_TYPES[tp_evento]
    except KeyError:
        raise InvalidManifestation(
            f"Tipo de manifestação do tomador desconhecido: {tp_evento!r} (use 203202 ou 203206)."
        ) from None


@dataclass(frozen=True, slots=True)
class RejectionReason:
    code: str  # cMotivo
    text: str  # xMotivo

    @property
    def label(self) -> str:
        return f"{self.code} - {REJECTION_REASONS[self.code]}: {self.text}"


def validate_reason(tp_evento: str, code: str | int | None, text: str | None) -> RejectionReason | None:
    """The reason to send with the event (None for a confirmation); raises with the reason why not."""
    kind = taker_type(tp_evento)
    value = one_line(text)
    wanted = "" if code is None else str(code).strip()
    if not kind.with_reason:
        if value or wanted:
            raise InvalidManifestation(f"{kind.label} não aceita motivo.")
        return None
    if wanted not in REJECTION_REASONS:
        codes = ", ".join(f"{c} ({t})" for c, t in REJECTION_REASONS.items())
        raise InvalidManifestation(f"Informe o motivo da rejeição: {codes}.")
    if not value:
        raise InvalidManifestation(f"{kind.label} exige a descrição do motivo, de 15 a 255 caracteres.")
    return RejectionReason(wanted, free_text(value, "A descrição do motivo"))


def stored_reason(reason: RejectionReason | None) -> str | None:
    return None if reason is None else f"{reason.code} {reason.text}"


def read_reason(stored: str | None) -> RejectionReason | None:
    if not stored:
        return None
    code, _space, text = stored.partition(" ")
    return RejectionReason(code, text) if code in REJECTION_REASONS else None


def ped_reg_id(key: str, tp_evento: str) -> str:
    """``infPedReg@Id``: "PRE" + key (50) + tpEvento (6); also the guard's identity of the event."""
    taker_type(tp_evento)
    if not _KEY.fullmatch(key):
        raise InvalidManifestation(f"Chave de acesso de NFS-e inválida para manifestação: {key!r}.")
    return f"PRE{key}{tp_evento}"


def refusal(
    company_doc: str, certificate_doc: str | None, emitter_doc: str | None, taker_doc: str | None
) -> str | None:
    """Why the company may not manifest this NFS-e (checked before anything is signed), or None.

    Its own NFS-e (the company is the prestador) is never manifested; otherwise only the taker
    may, with a certificate of the taker's own CNPJ (Sefin E1831/E0715 otherwise).
    """
    if emitter_doc and emitter_doc == company_doc:
        return "NFS-e emitida pela própria empresa: não é possível manifestar como tomador."
    if not taker_doc:
        return "A NFS-e não informa o tomador: só o tomador pode confirmá-la ou rejeitá-la."
    if taker_doc != company_doc:
        return f"A empresa não é a tomadora desta NFS-e (tomador {taker_doc}): só o tomador pode manifestar."
    if certificate_doc != taker_doc:
        return (
            f"O certificado da empresa é do CNPJ/CPF {certificate_doc or '-'}, não do tomador {taker_doc}: "
            "a manifestação precisa ser assinada com o certificado do tomador."
        )
    return None


class SefinOutcome(StrEnum):
    ACCEPTED = "accepted"  # 201: the evento registered
    REJECTED = "rejected"  # 4xx with an error code: the request ends rejected with its reason
    RETRY = "retry"  # 5xx, 429 or no usable answer: sent again later


@dataclass(frozen=True, slots=True)
class SefinVerdict:
    outcome: SefinOutcome
    code: str | None  # the Sefin error code ("E1833"), or None
    reason: str


def judge_event_answer(status: int, code: str | None, message: str) -> SefinVerdict:
    """How a Sefin answer to ``POST /nfse/{chave}/eventos`` ends the request."""
    if status == 201:
        return SefinVerdict(SefinOutcome.ACCEPTED, None, "Evento registrado na Sefin Nacional.")
    if status >= 500 or status in (408, 429):
        return SefinVerdict(SefinOutcome.RETRY, code, f"Sefin Nacional indisponível (HTTP {status}); nova tentativa.")
    text = message or "sem descrição"
    if code == E_ONE_TAKER_MANIFESTATION:
        text = f"já existe uma manifestação do tomador para esta NFS-e ({text})"
    return SefinVerdict(SefinOutcome.REJECTED, code or f"HTTP{status}", f"Rejeitado ({code or status}): {text}")
