"""The one injectable clock. Real time for the app, virtual time for tests and simulations.

Domain rules never read the time themselves: they take ``now`` as an argument. The services
that drive them hold a ``Clock``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

# Brasília time. On Windows the IANA database comes from the tzdata package.
BRASILIA = ZoneInfo("America/Sao_Paulo")


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant as an aware datetime (UTC)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait; a virtual clock advances instead of blocking."""
        ...

    @property
    def factor(self) -> float:
        """Seconds of this clock per real second while the process waits on something real (a
        socket's timeout): 1 but for a sped-up clock."""
        ...


class SystemClock:
    """Wall-clock time."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        threading.Event().wait(max(0.0, seconds))

    @property
    def factor(self) -> float:
        return 1.0


class FakeClock:
    """Virtual time: ``advance`` moves it, ``sleep`` advances instead of waiting. Thread-safe."""

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | float) -> datetime:
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        if step < timedelta(0):
            raise ValueError("a clock does not run backwards; use set() to model a jump")
        with self._lock:
            self._now += step
            return self._now

    def set(self, instant: datetime) -> None:
        """Jump to ``instant`` (either way): models a machine resuming from sleep or a fixed clock."""
        if instant.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        with self._lock:
            self._now = instant.astimezone(UTC)

    def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))

    @property
    def factor(self) -> float:
        """1: virtual time moves only by ``advance`` (a real wait costs it nothing)."""
        return 1.0


class ScaledClock:
    """Real time sped up ``factor`` times from ``origin``: the demo's clock.

    ``now() = origin + (real now - real_origin) * factor``. ``real_origin`` defaults to the moment
    of construction; giving it (with ``origin``) makes the mapping a pure function of real time,
    so two processes built from the same three values read the same virtual time (the crash
    test's parent and its killed-and-restarted children).
    """

    def __init__(self, factor: float, origin: datetime | None = None, *, real_origin: datetime | None = None) -> None:
        if factor <= 0:
            raise ValueError("factor must be positive")
        if (origin is not None and origin.tzinfo is None) or (real_origin is not None and real_origin.tzinfo is None):
            raise ValueError("ScaledClock needs aware datetimes")
        self._factor = factor
        self._real_origin = real_origin.astimezone(UTC) if real_origin else datetime.now(UTC)
        self._origin = origin.astimezone(UTC) if origin else self._real_origin

    @property
    def origin(self) -> datetime:
        """The virtual instant at ``real_origin``."""
        return self._origin

    @property
    def real_origin(self) -> datetime:
        """The real (UTC) instant the clock counts from."""
        return self._real_origin

    @property
    def factor(self) -> float:
        """How many seconds of this clock pass per real second (the service scales its cycles)."""
        return self._factor

    def now(self) -> datetime:
        elapsed = datetime.now(UTC) - self._real_origin
        return self._origin + elapsed * self._factor

    def sleep(self, seconds: float) -> None:
        threading.Event().wait(max(0.0, seconds) / self._factor)


def to_brasilia(instant: datetime) -> datetime:
    if instant.tzinfo is None:
        raise ValueError("aware datetime required")
    return instant.astimezone(BRASILIA)


def brasilia_iso(instant: datetime) -> str:
    """``AAAA-MM-DDThh:mm:ss-03:00``: the TDateTimeUTC form the fiscal schemas use."""
    return to_brasilia(instant).replace(microsecond=0).isoformat()
