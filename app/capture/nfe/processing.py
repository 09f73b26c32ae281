"""Per-document processing of the NF-e distribution: one docZip in, one store input out.

Nothing is dropped: a docZip that does not decode, or bytes that are not acceptable XML, become a
quarantined document (kept with its error, shown, retried later); an unknown root is kept as
``unknown``. Metadata come from app.documents; the original bytes are stored as received, and
the docZip's gzip rides along so the store keeps it instead of compressing again. The kinds,
roles, status and direction are app.core.documents' enums on both sides, passed as they are.
"""

from __future__ import annotations

from app.capture.engine import inputs
from app.core.cstat import CANCELLATION_REGISTERED_TEXT
from app.core.errors import CapturaError
from app.core.event_types import CANCELLATIONS
from app.core.ids import Cnpj
from app.core.products import Product
from app.documents.model import EventMeta, NfeMeta, UnknownMeta
from app.documents.nfe import read_nfe_document
from app.fiscal.distribution import DistributedDocument
from app.store.records import (
    DocumentInput,
    EventInput,
)

StoreInput = DocumentInput | EventInput

# The events that change an NF-e's situation when registered (cStat 135/136/155).
CANCELLATION_EVENTS = frozenset(CANCELLATIONS)


def process_document(company: Cnpj, doc: DistributedDocument, product: Product = Product.NFE) -> StoreInput:
    """Classify and extract one distributed document; never raises for bad content."""
    if doc.xml is None:
        # Corrupt base64/gzip: keep what arrived so nothing is lost and it can be decoded again.
        return inputs.undecoded(product, doc)
    return process_xml(company, doc.xml, nsu=doc.nsu, schema=doc.schema, product=product, xml_gzip=doc.xml_gzip)


def process_xml(
    company: Cnpj,
    xml: bytes,
    *,
    nsu: int | None,
    schema: str | None,
    product: Product = Product.NFE,
    xml_gzip: bytes | None = None,
) -> StoreInput:
    """Classify and extract ``xml``; ``xml_gzip`` (the gzip it was inflated from) rides along to
    the store, which keeps it as the compressed form."""
    try:
        meta = read_nfe_document(xml, schema)
    except CapturaError as error:
        return inputs.quarantined(product, xml, nsu, schema, error.message, xml_gzip)
    if isinstance(meta, EventMeta):
        return inputs.event(product, meta, xml, nsu, schema, xml_gzip, event_at=meta.event_at)
    if isinstance(meta, UnknownMeta):
        return inputs.unknown(product, xml, nsu, schema, f"Documento não reconhecido (raiz <{meta.root}>)", xml_gzip)
    if not isinstance(meta, NfeMeta):  # the NF-e reader gives no CT-e; typed for the union
        return inputs.quarantined(product, xml, nsu, schema, "Documento inesperado para NF-e.", xml_gzip)
    return _document_input(company, meta, xml, nsu, schema, product, xml_gzip)


def _document_input(
    company: Cnpj,
    meta: NfeMeta,
    xml: bytes,
    nsu: int | None,
    schema: str | None,
    product: Product,
    xml_gzip: bytes | None,
) -> DocumentInput:
    return inputs.document(
        product, company, meta, xml, nsu, schema, xml_gzip, shown=meta.recipient, situation=meta.situation
    )


def is_registered_cancellation(item: StoreInput) -> bool:
    return (
        isinstance(item, EventInput)
        and item.tp_evento in CANCELLATION_EVENTS
        and (item.cstat is None or item.cstat in CANCELLATION_REGISTERED_TEXT)
    )
