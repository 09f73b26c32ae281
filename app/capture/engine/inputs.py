"""Store inputs every product builds the same way from what its reader gives.

Per-document processing (``app.capture.nfe.processing``, ``app.capture.cte.processing``) reads
with its own product's reader and decides its own fields; what follows is shared: a docZip that
does not decode or bytes that are not acceptable XML are kept in quarantine with their error, an
unknown root is kept as ``unknown`` with a situation that says what it is, an event is an event.
"""

from __future__ import annotations

from datetime import datetime

from app.core.documents import DocumentKind
from app.core.products import Product
from app.documents.model import EventMeta
from app.fiscal.distribution import DistributedDocument
from app.store.records import DocumentInput, EventInput


def undecoded(product: Product, doc: DistributedDocument) -> DocumentInput:
    """A docZip whose base64 or gzip is corrupt: what arrived, kept to be decoded again."""
    error = doc.error.message if doc.error is not None else "Conteúdo do docZip ilegível."
    return quarantined(product, doc.raw_b64.encode("ascii", "replace"), doc.nsu, doc.schema, error)


def quarantined(
    product: Product, data: bytes, nsu: int | None, schema: str | None, error: str, xml_gzip: bytes | None = None
) -> DocumentInput:
    return DocumentInput(
        product=product,
        kind=DocumentKind.UNKNOWN,
        xml=data,
        access_key=None,
        nsu=nsu,
        schema=schema,
        parse_error=error,
        xml_gzip=xml_gzip,
    )


def unknown(
    product: Product, xml: bytes, nsu: int | None, schema: str | None, situation: str, xml_gzip: bytes | None
) -> DocumentInput:
    """A well-formed document of a root the product's reader does not know: kept and shown."""
    return DocumentInput(
        product=product,
        kind=DocumentKind.UNKNOWN,
        xml=xml,
        access_key=None,
        nsu=nsu,
        schema=schema,
        situation=situation,
        xml_gzip=xml_gzip,
    )


def event(
    product: Product,
    meta: EventMeta,
    xml: bytes,
    nsu: int | None,
    schema: str | None,
    xml_gzip: bytes | None,
    *,
    event_at: datetime | None,
) -> EventInput:
    """An event as its reader read it; ``event_at`` is the instant the product records."""
    return EventInput(
        product=product,
        kind=meta.kind,
        xml=xml,
        access_key=meta.access_key,
        tp_evento=meta.tp_evento,
        n_seq_evento=meta.n_seq_evento,
        nsu=nsu,
        schema=schema,
        description=meta.description,
        protocol=meta.protocol,
        event_at=event_at,
        cstat=meta.cstat,
        author_id=meta.author_doc,
        xml_gzip=xml_gzip,
    )
