"""Compatibility: NF-e manifestation moved to ``app.capture.nfe.manifestation``."""

from app.capture.nfe.manifestation import (
    PRODUCT,
    SERVICE,
    ManifestationRefused,
    ManifestationView,
    NfeManifestationService,
)

__all__ = ["PRODUCT", "SERVICE", "ManifestationRefused", "ManifestationView", "NfeManifestationService"]
