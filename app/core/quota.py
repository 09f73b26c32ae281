"""Point queries (consNSU, consChNFe): the 20-per-hour quota per CNPJ and NT 2018.002 per key.

Rule book §4.6: a sliding window of 20 per hour per CNPJ counting only the queries that returned a
document (one without document, rejected or failed gives its slot back); without a slot,
internal work is deferred to the next slot plus a random spacing of up to 30 min (not an
attempt) and a user is told when it can run. Seed 004 (NT 2018.002): the same key is never
queried more than 10 times within an hour.

``counted_times`` are our clock's instants of the counted queries (when their answer arrived);
the caller keeps them. Nothing here reads a clock or draws a random number itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from app.core.cadence import SAFETY_MARGIN, display_time

POINT_QUOTA_PER_HOUR = 20
QUOTA_WINDOW = timedelta(hours=1)
# A counted query leaves our window a little after it leaves the service's, whose clock and
# receipt instant may differ from ours by seconds (see cadence.SAFETY_MARGIN).
QUOTA_MARGIN = SAFETY_MARGIN
MAX_DEFERRAL_SPACING = timedelta(minutes=30)

KEY_QUERY_LIMIT = 10  # NT 2018.002 via seed 004: "limite de 10 consultas iguais no limite de uma hora"
KEY_QUERY_WINDOW = timedelta(hours=1)


def _recent(times: Iterable[datetime], now: datetime, window: timedelta) -> list[datetime]:
    """Instants still inside the window ending at ``now``, oldest first."""
    return sorted(t for t in times if now - t < window)


def slot_available(counted_times: Iterable[datetime], now: datetime, *, limit: int = POINT_QUOTA_PER_HOUR) -> bool:
    """True when fewer than ``limit`` counted queries fall in the last hour (plus margin)."""
    return len(_recent(counted_times, now, QUOTA_WINDOW + QUOTA_MARGIN)) < limit


def next_slot_at(counted_times: Iterable[datetime], now: datetime, *, limit: int = POINT_QUOTA_PER_HOUR) -> datetime:
    """``now`` when a slot is free, else when enough of the oldest counted queries leave the window."""
    recent = _recent(counted_times, now, QUOTA_WINDOW + QUOTA_MARGIN)
    if len(recent) < limit:
        return now
    # The slot frees when the (excess+1)-th oldest leaves: then only limit-1 remain.
    return recent[len(recent) - limit] + QUOTA_WINDOW + QUOTA_MARGIN


def deferral_spacing(rng: random.Random) -> timedelta:
    """A random spacing of up to 30 min from the caller's RNG, so resumptions do not bunch up."""
    return timedelta(seconds=rng.uniform(0, MAX_DEFERRAL_SPACING.total_seconds()))


def deferred_until(
    counted_times: Iterable[datetime],
    now: datetime,
    spacing: timedelta,
    *,
    limit: int = POINT_QUOTA_PER_HOUR,
    blocked_until: datetime | None = None,
) -> datetime:
    """When deferred internal work may run: the next slot (or the end of a 656 block) plus spacing.

    The deferral is not an attempt: the caller must not count it against the work's attempts.
    """
    if not timedelta(0) <= spacing <= MAX_DEFERRAL_SPACING:
        raise ValueError("spacing must be within 0..30 min")
    start = next_slot_at(counted_times, now, limit=limit)
    if blocked_until is not None:
        start = max(start, blocked_until)
    return start + spacing


def available_at(
    counted_times: Iterable[datetime],
    now: datetime,
    *,
    limit: int = POINT_QUOTA_PER_HOUR,
    blocked_until: datetime | None = None,
) -> datetime:
    """When a point query may run: the next slot, or later while a 656 suspends point queries."""
    start = next_slot_at(counted_times, now, limit=limit)
    if blocked_until is not None and blocked_until > start:
        return blocked_until
    return start


def user_wait_text(
    counted_times: Iterable[datetime],
    now: datetime,
    *,
    limit: int = POINT_QUOTA_PER_HOUR,
    blocked_until: datetime | None = None,
) -> str | None:
    """What a user who asked for a point query is told; None when it can run now."""
    when = available_at(counted_times, now, limit=limit, blocked_until=blocked_until)
    if when <= now:
        return None
    if blocked_until is not None and when == blocked_until:
        return (
            "Consultas pontuais suspensas por consumo indevido. "
            f"Consulta disponível a partir de {display_time(when, now)}."
        )
    return (
        f"Limite de {limit} consultas com documento por hora atingido. "
        f"Consulta disponível a partir de {display_time(when, now)}."
    )


def key_query_allowed(times_for_key: Iterable[datetime], now: datetime, *, limit: int = KEY_QUERY_LIMIT) -> bool:
    """NT 2018.002: at most ``limit`` queries of one key within an hour (every query counts).

    A sliding window: it never allows more than the fixed window the seed counts from the first
    query, and also never 10 at 0:59 and 10 more at 1:00.
    """
    return len(_recent(times_for_key, now, KEY_QUERY_WINDOW)) < limit


def next_key_query_at(times_for_key: Iterable[datetime], now: datetime, *, limit: int = KEY_QUERY_LIMIT) -> datetime:
    recent = _recent(times_for_key, now, KEY_QUERY_WINDOW)
    if len(recent) < limit:
        return now
    return recent[len(recent) - limit] + KEY_QUERY_WINDOW
