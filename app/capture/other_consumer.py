"""Another system consuming a company's NF-e or CT-e with the same certificate: what the clerk sees.

The answer policies notice it and the engine records each sighting with the gaps it left (one
transaction); here the store's tally becomes the company's state line, the ``other_consumer``
field of ``status --json``, the Painel's banner and the notification (``kind`` "other_consumer").
"""

from __future__ import annotations

from datetime import datetime

from app.capture.context import CaptureContext, CaptureNotice
from app.core.other_consumer import OtherConsumerSummary
from app.core.products import Product
from app.store.consumers import OtherConsumerRepository

NOTICE_KIND = "other_consumer"
# NFS-e is not here on purpose: the ADN serves any NSU to whoever asks, nothing is taken from us.
PRODUCTS = (Product.NFE, Product.CTE)


def other_consumers(
    ctx: CaptureContext, product: Product, now: datetime, company_id: int | None = None
) -> dict[int, OtherConsumerSummary]:
    """Per company, the episode still worth telling (seen within a week, or NSUs still pending)."""
    if product not in PRODUCTS:
        return {}
    found = OtherConsumerRepository(ctx.db).summaries(product, () if company_id is None else (company_id,))
    return {cid: summary for cid, summary in found.items() if summary.active(now)}


def other_consumer_notice(ctx: CaptureContext, company_id: int, product: Product) -> CaptureNotice:
    """The notice of a sighting just recorded, with the tally as it stands."""
    summary = OtherConsumerRepository(ctx.db).summaries(product, (company_id,))[company_id]
    return CaptureNotice(NOTICE_KIND, company_id, product, summary.text(), summary.pending)
