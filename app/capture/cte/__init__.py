"""CT-e Inbound: distribution and gap recovery by NSU on the shared engine (rule book §5).

No recipient manifestation and no query by key exist for CT-e: the manifestation dispatcher does
nothing and every recovery is a ``consNSU``.
"""

from __future__ import annotations

from app.capture.context import CaptureContext
from app.capture.cte.adapter import SERVICE, CteAdapter
from app.capture.cte.processing import PRODUCT
from app.capture.engine.capture import DistributionCapture
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.points import PointQueries

__all__ = ["PRODUCT", "SERVICE", "CteAdapter", "CteCapture"]


class CteCapture(DistributionCapture):
    """CT-e Inbound: satisfies ``app.capture.products.ProductCapture``."""

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks | None = None) -> None:
        locks = locks or CompanyLocks()
        adapter = CteAdapter(ctx)
        super().__init__(ctx, adapter, points=PointQueries(ctx, adapter, locks), locks=locks)
