"""Recipient manifestation (MD-e) rules: event types, justification, deadlines, sequence, Ciência.

protocol.md §3.2–3.6; rule book §4.5; NT 2020.001 v1.50 allows one rectification of a conclusive
event (nSeqEvento 2, the last one counts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol, TypeVar

from app.core.cstat import EVENT_DUPLICATE, EVENT_REGISTERED, LOT_PROCESSED, OUTAGES
from app.core.errors import CapturaError
from app.core.event_types import CIENCIA as CIENCIA
from app.core.event_types import CONFIRMACAO as CONFIRMACAO
from app.core.event_types import DESCONHECIMENTO as DESCONHECIMENTO
from app.core.event_types import NAO_REALIZADA as NAO_REALIZADA
from app.core.retries import EVENT_SEND
from app.core.retries import MAX_EVENT_SENDS as MAX_EVENT_SENDS

MIN_CIENCIA_WAIT_MINUTES = 5  # rule book §4.1: MinutesToWaitAwarenessOperation >= 5
MAX_SEQ_CONCLUSIVE = 2  # the event and its one permitted rectification
JUSTIFICATION_MIN = 15
JUSTIFICATION_MAX = 255
_XJUST = re.compile(r"[!-ÿ][ -ÿ]*[!-ÿ]|[!-ÿ]")  # protocol.md §3.3
_KEY = re.compile(r"[0-9]{44}")


class InvalidManifestation(CapturaError, ValueError):
    """A manifestation that the service would reject: unknown type, bad justification, no sequence left."""


class Justification(StrEnum):
    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True, slots=True)
class ManifestationType:
    """One recipient event: ``desc_evento`` is the exact schema text, ``label`` the UI's."""

    tp_evento: str
    desc_evento: str
    label: str
    justification: Justification
    conclusive: bool
    deadline_days: int


class _EventType(Protocol):
    @property
    def tp_evento(self) -> str: ...


_T = TypeVar("_T", bound=_EventType)


def by_event_type(*types: _T) -> dict[str, _T]:
    """An event table (the recipient's, the taker's) keyed by each type's ``tp_evento``."""
    return {t.tp_evento: t for t in types}


MANIFESTATION_TYPES: dict[str, ManifestationType] = by_event_type(
    ManifestationType(CONFIRMACAO, "Confirmacao da Operacao", "Confirmação da Operação", Justification.NONE, True, 90),
    ManifestationType(CIENCIA, "Ciencia da Operacao", "Ciência da Operação", Justification.NONE, False, 10),
    ManifestationType(
        DESCONHECIMENTO,
        "Desconhecimento da Operacao",
        "Desconhecimento da Operação",
        Justification.OPTIONAL,
        True,
        90,
    ),
    ManifestationType(
        NAO_REALIZADA, "Operacao nao Realizada", "Operação não Realizada", Justification.REQUIRED, True, 90
    ),
)
CONCLUSIVE_TYPES = frozenset(t.tp_evento for t in MANIFESTATION_TYPES.values() if t.conclusive)


def manifestation_type(tp_evento: str) -> ManifestationType:
    try:
        return MANIFESTATION_TYPES[tp_evento]
    except KeyError:
        raise InvalidManifestation(f"Tipo de manifestação desconhecido: {tp_evento!r}.") from None


def validate_justification(tp_evento: str, text: str | None) -> str | None:
    """The ``xJust`` to send (stripped), or None; raises with the reason the service would give."""
    kind = manifestation_type(tp_evento)
    value = one_line(text)  # the layout allows neither breaks nor tabs
    if kind.justification is Justification.NONE:
        if value:
            raise InvalidManifestation(f"{kind.label} não aceita justificativa.")
        return None
    if not value:
        if kind.justification is Justification.REQUIRED:
            raise InvalidManifestation(f"{kind.label} exige justificativa de 15 a 255 caracteres.")
        return None
    return free_text(value)


def one_line(text: str | None) -> str:
    """A text typed in a dialog as the layouts take it: a line break becomes a space."""
    return " ".join((text or "").split())


def free_text(value: str, what: str = "A justificativa") -> str:
    """A justification or reason of 15-255 characters in the layouts' string pattern (NF-e ``xJust``,
    NFS-e ``xMotivo``: the same ``[!-ÿ][ -ÿ]*[!-ÿ]``); raises with the reason the service would give."""
    if not JUSTIFICATION_MIN <= len(value) <= JUSTIFICATION_MAX:
        raise InvalidManifestation(f"{what} deve ter de 15 a 255 caracteres (tem {len(value)}).")
    if not _XJUST.fullmatch(value):
        raise InvalidManifestation(
            f"{what} contém caracteres não permitidos (quebra de linha, tabulação ou símbolo fora do padrão)."
        )
    return value


def deadline(tp_evento: str, authorised_at: datetime) -> datetime:
    """Last instant to register the event: Ciência 10 days, conclusive 90 days from authorisation."""
    return authorised_at + timedelta(days=manifestation_type(tp_evento).deadline_days)


def within_deadline(tp_evento: str, authorised_at: datetime, now: datetime) -> bool:
    return now <= deadline(tp_evento, authorised_at)


def next_seq(tp_evento: str, registered_seqs: Iterable[int]) -> int:
    """nSeqEvento for a new event of this type on this key, given those already registered.

    Ciência: 1 only. A conclusive event: 1, then 2 for its one permitted rectification.
    """
    kind = manifestation_type(tp_evento)
    taken = set(registered_seqs)
    limit = MAX_SEQ_CONCLUSIVE if kind.conclusive else 1
    for seq in range(1, limit + 1):
        if seq not in taken:
            return seq
    if kind.conclusive:
        raise InvalidManifestation(f"{kind.label} já foi registrada e retificada: não há nova retificação permitida.")
    raise InvalidManifestation(f"{kind.label} já foi registrada para esta nota.")


def event_id(tp_evento: str, key: str, seq: int) -> str:
    """``ID`` + tpEvento + chNFe + nSeqEvento (2 digits): 54 characters, else cStat 572."""
    manifestation_type(tp_evento)
    if not _KEY.fullmatch(key):
        raise InvalidManifestation(f"Chave de acesso inválida para manifestação: {key!r}.")
    if not 1 <= seq <= 99:
        raise InvalidManifestation(f"nSeqEvento fora do intervalo: {seq}.")
    return f"ID{tp_evento}{key}{seq:02d}"


# ---------------------------------------------------------------- automatic Ciência


def ciencia_due_at(resnfe_received_at: datetime, wait_minutes: int) -> datetime:
    """When an automatic Ciência may go: the configured wait after the resNFe, never under 5 min."""
    return resnfe_received_at + timedelta(minutes=max(wait_minutes, MIN_CIENCIA_WAIT_MINUTES))


def ciencia_due(resnfe_received_at: datetime, wait_minutes: int, now: datetime) -> bool:
    return now >= ciencia_due_at(resnfe_received_at, wait_minutes)


@dataclass(frozen=True, slots=True)
class CienciaVerdict:
    """Send the automatic Ciência or not, and why (for the log and the document's status)."""

    send: bool
    reason: str

    def __bool__(self) -> bool:
        return self.send


def should_send_auto_ciencia(
    enabled_now: bool,
    accepted_events_for_key: Iterable[str],
    pending_ciencia_exists: bool,
    *,
    own_document: bool = False,
) -> CienciaVerdict:
    """The check just before sending (rule book §4.5).

    ``accepted_events_for_key``: tpEvento of the key's accepted manifestations (a pending
    conclusive one does not count: it may be rejected). ``pending_ciencia_exists``: another
    Ciência for the key is already queued, sent or accepted (at most one per key).
    """
    accepted = set(accepted_events_for_key)
    if not enabled_now:
        return CienciaVerdict(False, "Ciência automática desligada pela empresa.")
    if own_document:
        return CienciaVerdict(False, "Nota emitida pela própria empresa: sem manifestação automática.")
    conclusive = accepted & CONCLUSIVE_TYPES
    if conclusive:
        label = manifestation_type(min(conclusive)).label
        return CienciaVerdict(False, f"Já existe manifestação conclusiva aceita ({label}).")
    if CIENCIA in accepted or pending_ciencia_exists:
        return CienciaVerdict(False, "Ciência da Operação já enviada para esta nota.")
    return CienciaVerdict(True, "Ciência da Operação automática.")


# ---------------------------------------------------------------- results


class EventOutcome(StrEnum):
    ACCEPTED = "accepted"  # 135, 136
    ALREADY_DONE = "already_done"  # 573: registered before (by us or another system): success
    REJECTED = "rejected"
    RETRY = "retry"  # no event result: communication failure, service paused, lot-level answer only


@dataclass(frozen=True, slots=True)
class EventResult:
    outcome: EventOutcome
    cstat: int | None
    reason: str

    @property
    def success(self) -> bool:
        return self.outcome in (EventOutcome.ACCEPTED, EventOutcome.ALREADY_DONE)


def classify_event_result(event_cstat: int | None, xmotivo: str = "", *, lot_cstat: int | None = None) -> EventResult:
    """Classify a ``retEnvEvento``: the event's own cStat decides; 128 is only the lot's."""
    if event_cstat in EVENT_REGISTERED:
        return EventResult(EventOutcome.ACCEPTED, event_cstat, xmotivo or "Evento registrado.")
    if event_cstat == EVENT_DUPLICATE:
        return EventResult(
            EventOutcome.ALREADY_DONE, EVENT_DUPLICATE, f"Evento já registrado anteriormente (cStat {EVENT_DUPLICATE})."
        )
    if event_cstat is not None and event_cstat != LOT_PROCESSED:
        return EventResult(EventOutcome.REJECTED, event_cstat, _why(f"Rejeitado (cStat {event_cstat})", xmotivo))
    if lot_cstat is not None and lot_cstat != LOT_PROCESSED and lot_cstat not in OUTAGES:
        return EventResult(EventOutcome.REJECTED, lot_cstat, _why(f"Lote rejeitado (cStat {lot_cstat})", xmotivo))
    if lot_cstat in OUTAGES:
        reason = "Serviço de eventos paralisado; nova tentativa."
    else:
        reason = "Resposta sem resultado do evento; nova tentativa."
    return EventResult(EventOutcome.RETRY, lot_cstat, reason)


def _why(head: str, xmotivo: str) -> str:
    return f"{head}: {xmotivo}" if xmotivo else head


def event_retry_delay(sends: int) -> timedelta | None:
    """Wait before resending after ``sends`` unanswered sends; None when they are exhausted."""
    if sends >= MAX_EVENT_SENDS:
        return None
    return EVENT_SEND.delay(sends)


# ---------------------------------------------------------------- where a document stands


class ManifestationState(StrEnum):
    """What the recipient has said about an NF-e, as the grid shows and filters it."""

    NONE = "none"  # nothing registered, nothing requested
    REQUESTED = "requested"  # a request queued or sent, no answer yet
    CIENCIA = "ciencia"  # Ciência registered, no conclusive event yet
    CONFIRMED = "confirmed"  # 210200
    UNKNOWN_OPERATION = "unknown_operation"  # 210220
    NOT_PERFORMED = "not_performed"  # 210240


_STATE_OF_TYPE = {
    CONFIRMACAO: ManifestationState.CONFIRMED,
    DESCONHECIMENTO: ManifestationState.UNKNOWN_OPERATION,
    NAO_REALIZADA: ManifestationState.NOT_PERFORMED,
    CIENCIA: ManifestationState.CIENCIA,
}
CONCLUSIVE_STATES = frozenset(
    {ManifestationState.CONFIRMED, ManifestationState.UNKNOWN_OPERATION, ManifestationState.NOT_PERFORMED}
)


def state_of_type(tp_evento: str) -> ManifestationState:
    """The state a registered event of this type puts an NF-e in."""
    manifestation_type(tp_evento)
    return _STATE_OF_TYPE[tp_evento]


def manifestation_state(registered: Iterable[tuple[str, int]], requested: bool = False) -> ManifestationState:
    """From the registered manifestation events of a key, as (tpEvento, nSeqEvento) pairs.

    The conclusive event with the highest sequence counts (its one rectification replaces it);
    Ciência only while no conclusive event is registered; a request in flight shows as such.
    """
    conclusive = [(seq, tp) for tp, seq in registered if tp in CONCLUSIVE_TYPES]
    if conclusive:
        return _STATE_OF_TYPE[max(conclusive)[1]]
    if any(tp == CIENCIA for tp, _seq in registered):
        return ManifestationState.CIENCIA
    return ManifestationState.REQUESTED if requested else ManifestationState.NONE


@dataclass(frozen=True, slots=True)
class PendingDeadline:
    """The next manifestation a received NF-e still needs, and its last instant."""

    tp_evento: str
    due: datetime

    def days_left(self, now: datetime) -> int:
        """Whole days left (0 on the last day, negative once passed)."""
        return (self.due - now).days


def next_deadline(state: ManifestationState, authorised_at: datetime, now: datetime) -> PendingDeadline | None:
    """protocol.md §3.7: Ciência within 10 days of authorisation, a conclusive event within 90.

    Without any manifestation the Ciência deadline comes first while it has not passed; after it
    (or after a Ciência) the conclusive one; none once a conclusive event is registered.
    """
    if state in CONCLUSIVE_STATES:
        return None
    if state in (ManifestationState.NONE, ManifestationState.REQUESTED):
        ciencia = deadline(CIENCIA, authorised_at)
        if now <= ciencia:
            return PendingDeadline(CIENCIA, ciencia)
    return PendingDeadline(CONFIRMACAO, deadline(CONFIRMACAO, authorised_at))
