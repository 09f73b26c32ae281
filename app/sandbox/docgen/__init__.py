"""Generator of realistic, XSD-valid, signed NF-e, CT-e and NFS-e documents for the sandbox."""

from app.sandbox.docgen.common import Party
from app.sandbox.docgen.cte import GeneratedCTe
from app.sandbox.docgen.factory import DocumentFactory
from app.sandbox.docgen.nfe import GeneratedNFe
from app.sandbox.docgen.nfe_events import GeneratedEvent
from app.sandbox.docgen.nfse import GeneratedNfse, GeneratedNfseEvent

__all__ = [
    "DocumentFactory",
    "GeneratedCTe",
    "GeneratedEvent",
    "GeneratedNFe",
    "GeneratedNfse",
    "GeneratedNfseEvent",
    "Party",
]
