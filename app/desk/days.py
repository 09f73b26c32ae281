"""Days as the office counts them: Brasília's, whatever the machine's zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from app.core.clock import BRASILIA


def brasilia_midnight(day: date) -> datetime:
    """The instant (UTC) ``day`` begins in Brasília."""
    return datetime.combine(day, time(0), tzinfo=BRASILIA).astimezone(UTC)
