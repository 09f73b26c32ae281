"""Gap recovery and stuck-work rules (rule book §4.7, §4.6, §4.4 item 7, §6.7).

Daily at 23:00 Brasília the NSUs of the last 3 days are checked for holes; every 5 minutes the
pending ones are dispatched as consNSU within the point-query quota; each NSU is retried with a
backoff of 1 min doubling to 30 min, with jitter, for at most 8 attempts. A 137 on consNSU means
the NSU does not exist for us ("NSU inexistente") and ends its recovery.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from enum import StrEnum

from app.core.cadence import CaptureState
from app.core.clock import BRASILIA
from app.core.cstat import CONSUMO_INDEVIDO, DOCUMENTS_FOUND, NO_DOCUMENTS, OUTAGES
from app.core.nsu import missing_nsus
from app.core.products import Product
from app.core.retries import GAP_RECOVERY, GAP_RECOVERY_JITTER_SHARE, MAX_GAP_RECOVERY_ATTEMPTS

DAILY_RUN_AT = time(23, 0)  # Brasília
LOOKBACK = timedelta(days=3)
DISPATCH_INTERVAL = timedelta(minutes=5)
MAX_ATTEMPTS = MAX_GAP_RECOVERY_ATTEMPTS
STUCK_AFTER = timedelta(hours=2)  # a document in processing for longer is re-dispatched

FOUND = DOCUMENTS_FOUND
NOT_FOUND = NO_DOCUMENTS


def next_daily_run(now: datetime) -> datetime:
    """The next 23:00 in Brasília after ``now``, as UTC."""
    local = now.astimezone(BRASILIA)
    candidate = datetime.combine(local.date(), DAILY_RUN_AT, tzinfo=BRASILIA)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), DAILY_RUN_AT, tzinfo=BRASILIA)
    return candidate.astimezone(UTC)


def lookback_start(now: datetime) -> datetime:
    """Documents received since this instant are checked for holes."""
    return now - LOOKBACK


def gaps(received_nsus: Iterable[int], first: int, last: int) -> tuple[int, ...]:
    """The NSUs in ``first..last`` (the last 3 days' range, given by the engine) never received."""
    return tuple(missing_nsus(received_nsus, first, last))


def backoff(attempt: int, jitter: float) -> timedelta:
    """Wait after failed attempt ``attempt`` (1-based): 1 min doubling to 30 min, minus up to 20 %.

    ``jitter`` in [0, 1) comes from the caller's RNG; jitter only shortens, so the cap holds.
    """
    if attempt < 1:
        raise ValueError("attempt is 1-based")
    if not 0.0 <= jitter < 1.0:
        raise ValueError("jitter must be in [0, 1)")
    return GAP_RECOVERY.delay(attempt) * (1 - GAP_RECOVERY_JITTER_SHARE * jitter)


class RecoveryStatus(StrEnum):
    """Same values as the store's ``GapStatus``."""

    PENDING = "pending"
    RECOVERED = "recovered"
    NOT_FOUND = "not_found"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class RecoveryStep:
    status: RecoveryStatus
    attempts: int
    retry_at: datetime | None
    reason: str
    counts_for_quota: bool = False  # only a query that returned the document


def after_attempt(attempts: int, cstat: int | None, now: datetime, jitter: float, *, xmotivo: str = "") -> RecoveryStep:
    """The recovery of one NSU after a consNSU that ended with ``cstat`` (None: no answer).

    ``attempts`` counts earlier attempts. 656 and 108/109 are not the NSU's fault: they leave it
    pending without an attempt (the point-query block or the pause decides when it runs).
    """
    if cstat == FOUND:
        return RecoveryStep(RecoveryStatus.RECOVERED, attempts + 1, None, "Documento recuperado.", True)
    if cstat == NOT_FOUND:
        return RecoveryStep(RecoveryStatus.NOT_FOUND, attempts + 1, None, "NSU inexistente (cStat 137).")
    if cstat == CONSUMO_INDEVIDO or cstat in OUTAGES:
        return RecoveryStep(RecoveryStatus.PENDING, attempts, None, f"Adiada (cStat {cstat}): {xmotivo}".rstrip(": "))
    done = attempts + 1
    what = f"cStat {cstat}: {xmotivo}".rstrip(": ") if cstat is not None else (xmotivo or "falha de comunicação")
    if done >= MAX_ATTEMPTS:
        return RecoveryStep(
            RecoveryStatus.ABANDONED, done, None, f"Recuperação falhou após {done} tentativas ({what})."
        )
    retry_at = now + backoff(done, jitter)
    return RecoveryStep(RecoveryStatus.PENDING, done, retry_at, f"Tentativa {done} de {MAX_ATTEMPTS} falhou ({what}).")


def is_stuck(processing_since: datetime, now: datetime) -> bool:
    """A document in processing for more than 2 hours is re-dispatched."""
    return now - processing_since > STUCK_AFTER


def nfse_rewind(state: CaptureState, gap_nsus: Iterable[int]) -> CaptureState:
    """NFS-e (§6.7): restart the capture from the NSU before the first gap; idempotence absorbs repeats.

    The ADN, unlike the AN, does not judge the sequence of NSUs asked, so going back is allowed
    there; never use this for NF-e or CT-e, whose cursor only moves forward.
    """
    if state.product is not Product.NFSE:
        raise ValueError("only the NFS-e cursor may go back")
    first = min(gap_nsus, default=None)
    if first is None or first - 1 >= state.ult_nsu:
        return state
    return replace(state, ult_nsu=max(0, first - 1))
