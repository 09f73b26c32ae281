"""Circuit breakers of the NFS-e capture (rule book §6.3 item 9), as pure state.

One breaker per certificate (10 failures) and one global (50 failures); an open breaker stops
every call it covers for 60 seconds. After that the next call is a trial: a success closes the
breaker (its count back to zero), a failure opens it again at once. Failures are transient
ones (5xx, timeouts, dropped connections) and certificate refusals; an answer of the service
(documents, an empty queue, a rejection, a 429) is a success for the breaker.

Every function returns new frozen values; the holder (the NFS-e adapter) keeps them under its
own lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

CERTIFICATE_THRESHOLD = 10
GLOBAL_THRESHOLD = 50
OPEN_FOR = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class Breaker:
    """Consecutive failures since the last success, and until when the breaker is open."""

    threshold: int
    open_for: timedelta = OPEN_FOR
    failures: int = 0
    opened_until: datetime | None = None  # kept after it passes: the next call is a trial

    def open_at(self, now: datetime) -> bool:
        return self.opened_until is not None and now < self.opened_until

    def failed(self, now: datetime) -> Breaker:
        if self.opened_until is not None and now >= self.opened_until:
            # the trial call after an open period failed: open again at once
            return replace(self, failures=self.threshold, opened_until=now + self.open_for)
        if self.open_at(now):
            return self
        failures = self.failures + 1
        if failures >= self.threshold:
            return replace(self, failures=failures, opened_until=now + self.open_for)
        return replace(self, failures=failures)

    def succeeded(self) -> Breaker:
        return replace(self, failures=0, opened_until=None)


def _certificate_breaker() -> Breaker:
    return Breaker(CERTIFICATE_THRESHOLD)


@dataclass(frozen=True, slots=True)
class Breakers:
    """The global breaker and one per certificate (by its fingerprint)."""

    global_breaker: Breaker = field(default_factory=lambda: Breaker(GLOBAL_THRESHOLD))
    certificates: dict[str, Breaker] = field(default_factory=dict)

    def certificate(self, fingerprint: str) -> Breaker:
        return self.certificates.get(fingerprint) or _certificate_breaker()

    def open_until(self, fingerprint: str, now: datetime) -> datetime | None:
        """None when a call with this certificate may go now, else when its breaker closes."""
        limits = [
            breaker.opened_until
            for breaker in (self.global_breaker, self.certificate(fingerprint))
            if breaker.open_at(now) and breaker.opened_until is not None
        ]
        return max(limits, default=None)

    def failed(self, fingerprint: str, now: datetime) -> Breakers:
        certificates = dict(self.certificates)
        certificates[fingerprint] = self.certificate(fingerprint).failed(now)
        return Breakers(self.global_breaker.failed(now), certificates)

    def succeeded(self, fingerprint: str) -> Breakers:
        certificates = dict(self.certificates)
        certificates.pop(fingerprint, None)
        return Breakers(self.global_breaker.succeeded(), certificates)

    def global_open(self, now: datetime) -> bool:
        return self.global_breaker.open_at(now)


def open_reason(*, global_open: bool) -> str:
    """The status line while a breaker holds a company's calls."""
    scope = "de todas as empresas" if global_open else "deste certificado"
    return f"Disjuntor aberto após falhas seguidas no ADN: chamadas {scope} suspensas por 60 segundos."
