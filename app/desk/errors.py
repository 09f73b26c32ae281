"""The desk's refusals (a module of their own: the desk's helpers raise them without importing the desk)."""

from __future__ import annotations

from app.core.errors import CapturaError


class DeskError(CapturaError):
    """The desk cannot do that now (not open, read-only...)."""
