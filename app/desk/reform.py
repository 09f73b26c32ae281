"""The documents linked to the one in the detail, and its reform values: the CT-e that moved an
NF-e or the NF-e a CT-e carries; the NF-e an NF-e references or that reference it (a nota de
crédito or de débito and the notes it adjusts), this company's row when stored; its IBS, CBS and
IS (``app.store.reform``) and finNFe, for the detail and ``documents show --json``."""

from __future__ import annotations

from collections.abc import Callable

from app.core.products import Product
from app.desk.grid import GridCursor
from app.desk.views import GridFilter, GridRow, RelatedDocument
from app.documents.reform_model import ReformValues
from app.store.db import Database
from app.store.reform import ReformRepository

RELATED_SHOWN = 200  # a CT-e may carry hundreds of NF-e: the detail looks up this many
REFERENCES_SHOWN = 20


def _linked(cursor: Callable[[GridFilter], GridCursor], product: Product, company_id: int, key: str) -> RelatedDocument:
    rows = cursor(GridFilter(product, company_ids=(company_id,), search=key)).next_page(1)
    return RelatedDocument(product, key, rows[0] if rows else None)


def related_of(row: GridRow, cursor: Callable[[GridFilter], GridCursor]) -> tuple[RelatedDocument, ...]:
    """The CT-e that moved an NF-e, or the NF-e a CT-e carries (this company's, when stored)."""
    other = {Product.NFE: Product.CTE, Product.CTE: Product.NFE}.get(row.product)
    if other is None:
        return ()
    return tuple(_linked(cursor, other, row.company_id, key) for key in row.carried_keys[:RELATED_SHOWN])


def reform_of(
    db: Database, row: GridRow, cursor: Callable[[GridFilter], GridCursor]
) -> tuple[ReformValues | None, str | None, tuple[RelatedDocument, ...]]:
    """(values, finNFe, linked NF-e) of ``row``, in ``DocumentDetail``'s order; ``cursor`` is the
    desk's, to find this company's row of each linked key."""
    repository = ReformRepository(db)
    purpose, values = repository.values_of(row.row_id)
    if row.product is not Product.NFE or not row.access_key:
        return values, purpose, ()
    keys = [
        *repository.referenced_by(row.company_id, row.access_key),
        *repository.referencing(row.company_id, row.access_key),
    ]
    linked = (_linked(cursor, Product.NFE, row.company_id, key) for key in dict.fromkeys(keys[:REFERENCES_SHOWN]))
    return values, purpose, tuple(linked)
