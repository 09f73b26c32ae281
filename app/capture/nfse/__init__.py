"""NFS-e Inbound: ADN distribution, taker manifestation and the daily gap check (rule book §6).

The distribution runs on the shared engine through :class:`NfseAdapter` (the ADN's REST API);
the manifestation dispatcher is part B's ``NfseManifestationService``; the gap check restarts a
company's distribution before a hole (the ADN has no point query in this routine).
"""

from __future__ import annotations

from app.capture.context import CaptureContext
from app.capture.engine.capture import DistributionCapture
from app.capture.engine.locks import CompanyLocks
from app.capture.nfse.adapter import NfseAdapter
from app.capture.nfse.gaps import NfseGapCheck
from app.capture.nfse.manifestation import NfseManifestationService
from app.capture.nfse.processing import PRODUCT
from app.fiscal.adn import SERVICE

__all__ = ["PRODUCT", "SERVICE", "NfseAdapter", "NfseCapture"]


class NfseCapture(DistributionCapture):
    """NFS-e Inbound: satisfies ``app.capture.products.ProductCapture``."""

    adapter: NfseAdapter

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks | None = None) -> None:
        locks = locks or CompanyLocks()
        self.adapter = NfseAdapter(ctx)
        super().__init__(
            ctx,
            self.adapter,
            points=NfseGapCheck(ctx, locks),
            manifestation=NfseManifestationService(ctx),
            locks=locks,
        )
