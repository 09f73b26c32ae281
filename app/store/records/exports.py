"""Automatic export profiles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.documents import Direction
from app.core.products import Product

EXPORT_KINDS = ("complete", "summary", "event")
CANCELLED_MODES = ("move", "beside")


@dataclass(frozen=True, slots=True)
class ExportProfile:
    """What an automatic export writes, where, and how far it got.

    Empty ``products``, ``kinds``, ``directions`` or ``company_ids`` mean all of them.
    ``cancelled_mode``: "move" puts a cancelled document under ``Canceladas``; "beside" leaves it
    and writes its cancellation event in the same folder.
    """

    name: str
    destination: str
    pattern: str
    products: tuple[Product, ...] = ()
    kinds: tuple[str, ...] = ()
    directions: tuple[Direction, ...] = ()
    company_ids: tuple[int, ...] = ()
    only_authorised: bool = False
    cancelled_mode: str = "move"
    include_pdf: bool = False
    active: bool = True
    id: int = 0
    watermark: int = 0
    exported_count: int = 0
    last_error: str | None = None
    failing_since: datetime | None = None
    next_attempt_at: datetime | None = None
    last_export_at: datetime | None = None
