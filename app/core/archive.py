"""Which government exchanges are archived (request and response bytes), per product.

One pure decision, read next to the rule book: NF-e §4.3 item 4, "as respostas com documentos e
as rejeições (exceto 656) são arquivadas"; CT-e §5.3 item 3, "a requisição e a resposta são
arquivadas" (every exchange). NFS-e has no SOAP exchange to archive here. Every call is also
logged (``CallRecord``) whatever this says: the archive is the bytes, the log is the fact.
"""

from __future__ import annotations

from app.core.cstat import CONSUMO_INDEVIDO, is_rejection
from app.core.products import Product


def archive_exchange(product: Product, cstat: int, *, has_documents: bool) -> bool:
    """Whether the request/response bytes of a distribution answer with ``cstat`` are archived."""
    if product is Product.CTE:
        return True
    if product is Product.NFE:
        return has_documents or (is_rejection(cstat) and cstat != CONSUMO_INDEVIDO)
    return False
