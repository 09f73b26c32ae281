"""NF-e Inbound: distribution, manifestation, point queries and the daily check (rule book §4)."""

from __future__ import annotations

from app.capture.context import CaptureContext
from app.capture.engine.capture import DistributionCapture
from app.capture.engine.locks import CompanyLocks
from app.capture.nfe.adapter import PRODUCT, SERVICE, NfeAdapter
from app.capture.nfe.manifestation import NfeManifestationService
from app.capture.nfe.recovery import NfePointQueries

__all__ = ["PRODUCT", "SERVICE", "NfeAdapter", "NfeCapture"]


class NfeCapture(DistributionCapture):
    """NF-e Inbound: satisfies ``app.capture.products.ProductCapture``."""

    manifestation: NfeManifestationService
    points: NfePointQueries

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks | None = None) -> None:
        locks = locks or CompanyLocks()
        super().__init__(
            ctx,
            NfeAdapter(ctx),
            manifestation=NfeManifestationService(ctx),
            points=NfePointQueries(ctx, locks),
            locks=locks,
        )
