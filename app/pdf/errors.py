"""What the renderers refuse, in a sentence the user understands."""

from __future__ import annotations

from app.core.errors import CapturaError


class PdfError(CapturaError):
    """This XML cannot be printed (not a document we render, or missing what the layout needs)."""
