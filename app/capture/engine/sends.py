"""What every product's event dispatcher does alike with a send that got no answer.

NF-e recipient events and NFS-e taker events are retried the same way (``app.core.manifestation.
event_retry_delay``: 1 minute doubling up to 30, 8 sends at most); a failure that retrying cannot
cure (a request refused before sending, a TLS refusal) ends the request rejected with its reason.
"""

from __future__ import annotations

from datetime import datetime

from app.capture.context import CaptureContext
from app.core.manifestation import event_retry_delay
from app.store.records import Manifestation, ManifestationStatus
from app.store.unit import Unit


def settle_unanswered(
    unit: Unit, request: Manifestation, message: str, now: datetime, *, retryable: bool = True
) -> ManifestationStatus:
    """Pending again after the backoff, or rejected once sends are exhausted or it cannot help."""
    delay = event_retry_delay(request.attempts + 1)
    if delay is None or not retryable:
        unit.settle_manifestation(request.id, ManifestationStatus.REJECTED, cstat=None, x_motivo=message)
        return ManifestationStatus.REJECTED
    unit.settle_manifestation(
        request.id, ManifestationStatus.PENDING, cstat=None, x_motivo=message, retry_at=now + delay
    )
    return ManifestationStatus.PENDING


def settle_unsent(
    ctx: CaptureContext,
    request: Manifestation,
    status: ManifestationStatus,
    *,
    cstat: str | None,
    x_motivo: str,
    retry_at: datetime | None = None,
) -> ManifestationStatus:
    """A request settled without being sent (refused at the moment of sending, a guard's wait,
    an automatic Ciência no longer due); returns ``status``."""
    with ctx.unit() as unit:
        unit.settle_manifestation(request.id, status, cstat=cstat, x_motivo=x_motivo, retry_at=retry_at)
    return status
