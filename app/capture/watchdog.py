"""The service's heartbeat: company runs in flight, stalls, and jumps of the clock.

Two clocks are compared. ``Clock.now()`` is wall time (or the demo's sped-up time) and jumps when
the machine resumes from sleep or someone changes the time; ``time.monotonic()`` never jumps.
A watchdog that sees one move differently from the other, or that itself ran far later than its
interval (the process was frozen), reports a jump: the service re-plans instead of firing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from app.core.clock import Clock, ScaledClock
from app.core.products import Product

Monotonic = Callable[[], float]


def clock_rate(clock: Clock) -> float:
    """Seconds of ``clock`` per real second: 1, or the demo clock's speed-up."""
    return clock.factor if isinstance(clock, ScaledClock) else 1.0


class ClockWatch:
    """Detects jumps of ``clock`` against the monotonic clock between two ``check`` calls."""

    def __init__(
        self,
        clock: Clock,
        *,
        interval: float,
        tolerance: timedelta,
        rate: float = 1.0,
        monotonic: Monotonic = time.monotonic,
    ) -> None:
        self._clock = clock
        self._interval = interval
        self._tolerance = tolerance
        self._rate = rate
        self._monotonic = monotonic
        self._wall = clock.now()
        self._mono = monotonic()

    def check(self) -> timedelta | None:
        """The jump since the last check (clock time), or None when the clocks agree."""
        wall, mono = self._clock.now(), self._monotonic()
        elapsed = mono - self._mono
        drift = (wall - self._wall) - timedelta(seconds=elapsed * self._rate)
        # Where the monotonic clock counts sleep (Windows), the only sign is a late watchdog.
        late = timedelta(seconds=(elapsed - self._interval) * self._rate)
        self._wall, self._mono = wall, mono
        if abs(drift) > self._tolerance * self._rate:
            return drift
        if late > self._tolerance * self._rate:
            return late
        return None


@dataclass
class Flight:
    """One company run submitted to the workers; ``beat`` is monotonic time of the last sign of life."""

    product: Product
    company_id: int
    queued_at: datetime
    stall_after: float  # seconds without a heartbeat before the run counts as stalled
    started_at: datetime | None = None
    beat: float | None = None
    future: Future[None] | None = None
    stalled: bool = False

    @property
    def key(self) -> tuple[Product, int]:
        return (self.product, self.company_id)


class FlightTable:
    """Company runs in flight, keyed by (product, company); thread-safe."""

    def __init__(self, monotonic: Monotonic = time.monotonic) -> None:
        self._flights: dict[tuple[Product, int], Flight] = {}
        self._lock = threading.Lock()
        self._monotonic = monotonic

    def claim(self, flight: Flight) -> bool:
        """Register ``flight``; False when that company already has one (queued, running or stalled)."""
        with self._lock:
            if flight.key in self._flights:
                return False
            self._flights[flight.key] = flight
            return True

    def drop(self, flight: Flight) -> None:
        with self._lock:
            if self._flights.get(flight.key) is flight:
                del self._flights[flight.key]

    def started(self, flight: Flight, at: datetime) -> None:
        with self._lock:
            flight.started_at = at
            flight.beat = self._monotonic()

    def beat(self, product: Product, company_id: int) -> None:
        with self._lock:
            flight = self._flights.get((product, company_id))
            if flight is not None and flight.beat is not None:
                flight.beat = self._monotonic()

    def refresh_all(self) -> None:
        """After a clock jump or sleep: every running flight gets a fresh allowance."""
        now = self._monotonic()
        with self._lock:
            for flight in self._flights.values():
                if flight.beat is not None:
                    flight.beat = now

    def newly_stalled(self) -> list[tuple[Flight, float]]:
        """Running flights silent for longer than their allowance, marked stalled (once each)."""
        now = self._monotonic()
        found = []
        with self._lock:
            for flight in self._flights.values():
                if flight.beat is None or flight.stalled:
                    continue
                silent = now - flight.beat
                if silent > flight.stall_after:
                    flight.stalled = True
                    found.append((flight, silent))
        return found

    def silent_for(self, flight: Flight) -> float:
        """Seconds since ``flight``'s last heartbeat (0 while it is still queued)."""
        return 0.0 if flight.beat is None else self._monotonic() - flight.beat

    def snapshot(self) -> dict[tuple[Product, int], Flight]:
        """Copies of the flights (safe to read without the lock)."""
        with self._lock:
            return {key: replace(f) for key, f in self._flights.items()}

    def futures(self) -> list[Future[None]]:
        with self._lock:
            return [f.future for f in self._flights.values() if f.future is not None]

    def __len__(self) -> int:
        with self._lock:
            return len(self._flights)
