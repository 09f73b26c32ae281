"""The AN's consumption rules for the distribution services (NT 2014.002 v1.12+, NT 2015.002).

Pure functions over a per-(product, CNPJ) :class:`DistGuard` and ``now``; the services hold the
guards and apply the verdicts. Rule names are the ones the referee reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from app.core.cstat import SERVICE_DOWN, SERVICE_PAUSED

HOUR = timedelta(hours=1)
POINT_QUOTA_PER_HOUR = 20
OUTAGE_PAUSE = {SERVICE_PAUSED: timedelta(minutes=5), SERVICE_DOWN: timedelta(minutes=20)}

PREMATURE = "premature_query"  # distNSU < 1 h after 137 / reaching maxNSU
DURING_BLOCK = "query_during_block"  # any query while the 1 h block runs (it restarts)
OUT_OF_SEQUENCE = "out_of_sequence_nsu"  # ultNSU not the last one the AN returned to the CNPJ
POINT_QUOTA = "point_query_quota"  # more than 20 documents by consNSU/consChNFe in 1 h
DURING_OUTAGE_PAUSE = "query_during_outage_pause"  # < 5 min after 108, < 20 min after 109
REPEATED_REJECTED_EVENT = "repeated_rejected_event"  # NT 2018.002: same event rejected again in 1 h
ADN_PREMATURE = "adn_premature_query"  # ADN queried < 1 h after an empty answer
ADN_RATE = "adn_rate_limit"  # ADN over its per-minute rate

MOTIVO_656 = (
    "Rejeicao: Consumo Indevido (Deve ser aguardado 1 hora para efetuar nova solicitacao caso nao "
    "existam mais documentos a serem pesquisados. Tente apos 1 hora)"
)
MOTIVO_656_QUOTA = "Rejeicao: Consumo Indevido (Ultrapassou o limite de 20 consultas por hora)"
MOTIVO_656_SEQUENCE = (
    "Rejeicao: Consumo Indevido (NSU informado fora de sequencia: utilize o ultNSU retornado na ultima consulta)"
)


@dataclass
class DistGuard:
    """What the AN remembers about one CNPJ's use of one distribution service."""

    last_ult_nsu: int | None = None  # the ultNSU last returned by a distNSU (shared by all systems)
    asked_ult_nsu: int | None = None  # the ultNSU of that request: repeating it (lost answer) is in sequence
    idle_since: datetime | None = None  # when it answered 137 or reached maxNSU
    blocked_until: datetime | None = None
    point_hits: list[datetime] = field(default_factory=list)  # point queries that returned a document
    competitor_touched: bool = False  # the last change came from another system sharing the CNPJ


def dist_nsu_violation(guard: DistGuard, ult_nsu: int, now: datetime) -> str | None:
    """The rule a distNSU with ``ult_nsu`` breaks at ``now``, or None when it may be answered."""
    if guard.blocked_until is not None and now < guard.blocked_until:
        return DURING_BLOCK
    if guard.idle_since is not None and now < guard.idle_since + HOUR:
        return PREMATURE
    if guard.last_ult_nsu is not None and ult_nsu not in (guard.last_ult_nsu, guard.asked_ult_nsu):
        return OUT_OF_SEQUENCE
    return None


def point_query_violation(guard: DistGuard, now: datetime) -> str | None:
    if guard.blocked_until is not None and now < guard.blocked_until:
        return DURING_BLOCK
    if len(recent_point_hits(guard, now)) >= POINT_QUOTA_PER_HOUR:
        return POINT_QUOTA
    return None


def recent_point_hits(guard: DistGuard, now: datetime) -> list[datetime]:
    guard.point_hits = [t for t in guard.point_hits if now - t < HOUR]
    return guard.point_hits


def block(guard: DistGuard, now: datetime) -> None:
    """Every 656 (re)starts the one-hour block."""
    guard.blocked_until = now + HOUR


def after_dist_answer(guard: DistGuard, asked: int, ult_nsu: int, max_nsu: int, now: datetime) -> None:
    guard.asked_ult_nsu = asked
    guard.last_ult_nsu = ult_nsu
    guard.idle_since = now if ult_nsu >= max_nsu else None


def motivo_656(rule: str) -> str:
    if rule == POINT_QUOTA:
        return MOTIVO_656_QUOTA
    if rule == OUT_OF_SEQUENCE:
        return MOTIVO_656_SEQUENCE
    return MOTIVO_656
