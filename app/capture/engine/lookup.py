"""What a user's request for one document by its key came to, for every product.

NF-e answers it by ``consChNFe`` within the point-query quota (``app.capture.nfe.recovery``),
NFS-e by the Sefin Nacional's ``GET /nfse/{chave}`` (``app.capture.nfse.fetch``); both look in
the database first and say, in Portuguese, what they did or when the query can run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ReprocessResult:
    """Found locally, fetched, or not possible (yet), and why."""

    status: str  # "local", "fetched", "not_found", "deferred", "rejected"
    message: str
    document_id: int | None = None
    available_at: datetime | None = None
    unanswered: bool = False  # "rejected" because the service did not answer: a queued fetch tries again
