"""Every retry series of the app, named once: what is tried again, how often and how long apart.

The waits double from a first step up to a cap (``Backoff``); where the series ends after a
number of attempts, that number sits beside it. The capture cadence's own failure waits are
part of each product's :class:`app.core.cadence.CadenceRules`, read next to the rule book.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Final

_MAX_DOUBLINGS = 10  # 2**10 steps is past every cap below; it keeps the arithmetic small


@dataclass(frozen=True, slots=True)
class Backoff:
    """Waits of ``first``, doubling with each failure in a row, never above ``cap``."""

    first: timedelta
    cap: timedelta

    def delay(self, failures: int) -> timedelta:
        """The wait after the ``failures``-th failure in a row (1-based; less than 1 counts as 1)."""
        return min(self.first * (1 << min(max(0, failures - 1), _MAX_DOUBLINGS)), self.cap)


# An NF-e event (manifestation) whose send got no answer: 1 min doubling to 30 min, 8 sends at most.
EVENT_SEND: Final = Backoff(first=timedelta(minutes=1), cap=timedelta(minutes=30))
MAX_EVENT_SENDS: Final = 8

# A missing NSU asked by consNSU (rule book §4.6/§5.5): 1 min doubling to 30 min, minus up to
# 20 % so the retries of one batch spread out, 8 attempts at most.
GAP_RECOVERY: Final = Backoff(first=timedelta(minutes=1), cap=timedelta(minutes=30))
GAP_RECOVERY_JITTER_SHARE: Final = 0.2
MAX_GAP_RECOVERY_ATTEMPTS: Final = 8

# An automatic export whose folder failed, and a hand-off delivery that failed: 1, 2, 4...
# minutes, at most an hour, without end.
EXPORT_RETRY: Final = Backoff(first=timedelta(minutes=1), cap=timedelta(hours=1))

# One ADN (NFS-e) call that failed before reaching the service is tried again within the same
# call after these many seconds: four attempts in all.
ADN_CALL_RETRY_SECONDS: Final = (1.0, 2.0, 4.0)
