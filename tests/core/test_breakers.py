"""Circuit breakers of the NFS-e capture as pure state (rule book §6.3 item 9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.breakers import CERTIFICATE_THRESHOLD, GLOBAL_THRESHOLD, OPEN_FOR, Breakers

T0 = datetime(2026, 11, 2, 15, 0, tzinfo=UTC)


def _fail(breakers: Breakers, fingerprint: str, times: int, at: datetime = T0) -> Breakers:
    for _ in range(times):
        breakers = breakers.failed(fingerprint, at)
    return breakers


def test_a_certificate_breaker_opens_at_ten_failures_for_sixty_seconds() -> None:
    nine = _fail(Breakers(), "a", CERTIFICATE_THRESHOLD - 1)
    assert nine.open_until("a", T0) is None
    ten = nine.failed("a", T0)
    assert ten.open_until("a", T0) == T0 + OPEN_FOR == T0 + timedelta(seconds=60)
    assert ten.open_until("b", T0) is None  # another certificate is not held
    assert ten.open_until("a", T0 + OPEN_FOR) is None  # the trial call may go


def test_a_failed_trial_opens_again_and_a_success_closes() -> None:
    opened = _fail(Breakers(), "a", CERTIFICATE_THRESHOLD)
    after = T0 + OPEN_FOR
    again = opened.failed("a", after)
    assert again.open_until("a", after) == after + OPEN_FOR
    closed = again.succeeded("a")
    assert closed.open_until("a", after) is None
    assert closed.certificate("a").failures == 0
    assert _fail(closed, "a", CERTIFICATE_THRESHOLD - 1, after).open_until("a", after) is None


def test_the_global_breaker_opens_at_fifty_failures_for_every_certificate() -> None:
    breakers = Breakers()
    for n in range(GLOBAL_THRESHOLD - 1):
        breakers = breakers.failed(f"cert-{n % 9}", T0)  # never 10 on one certificate
    assert breakers.open_until("fresh", T0) is None
    breakers = breakers.failed("cert-0", T0)
    assert breakers.global_open(T0)
    assert breakers.open_until("fresh", T0) == T0 + OPEN_FOR
    assert breakers.succeeded("fresh").open_until("cert-1", T0) is None  # one answer closes it
