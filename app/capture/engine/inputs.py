"""Store inputs every product builds the same way from what its reader gives.

Per-document processing (``app.capture.nfe.processing``, ``app.capture.cte.processing``) reads
with its own product's reader and decides its own fields; what follows is shared: a docZip that
does not decode or bytes that are not acceptable XML are kept in quarantine with their error, an
unknown root is kept as ``unknown`` with a situation that says what it is, an event is an event.
"""

from __future__ import annotations

from datetime import datetime

from app.core.documents import DocumentKind
from app.core.ids import Cnpj
from app.core.products import Product
from app.documents.model import CteMeta, EventMeta, NfeMeta, PartyInfo, direction_of
from app.fiscal.distribution import DistributedDocument
from app.store.records import DocumentInput, EventInput, Party


def undecoded(product: Product, doc: DistributedDocument) -> DocumentInput:
    """A docZip whose base64 or gzip is corrupt: what arrived, kept to be decoded again."""
    error = doc.error.message if doc.error is not None else "Conteúdo do docZip ilegível."
    return quarantined(product, doc.raw_b64.encode("ascii", "replace"), doc.nsu, doc.schema, error)


def quarantined(
    product: Product, data: bytes, nsu: int | None, schema: str | None, error: str, xml_gzip: bytes | None = None
) -> DocumentInput:
    return _unread(product, data, nsu, schema, xml_gzip, parse_error=error)


def unknown(
    product: Product, xml: bytes, nsu: int | None, schema: str | None, situation: str, xml_gzip: bytes | None
) -> DocumentInput:
    """A well-formed document of a root the product's reader does not know: kept and shown."""
    return _unread(product, xml, nsu, schema, xml_gzip, situation=situation)


def _unread(
    product: Product,
    xml: bytes,
    nsu: int | None,
    schema: str | None,
    xml_gzip: bytes | None,
    *,
    parse_error: str | None = None,
    situation: str | None = None,
) -> DocumentInput:
    """Bytes kept as they came, no reader's fields: quarantined (``parse_error``) or unknown (``situation``)."""
    return DocumentInput(
        product=product,
        kind=DocumentKind.UNKNOWN,
        xml=xml,
        access_key=None,
        nsu=nsu,
        schema=schema,
        situation=situation,
        parse_error=parse_error,
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


def document(
    product: Product,
    company: Cnpj,
    meta: NfeMeta | CteMeta,
    xml: bytes,
    nsu: int | None,
    schema: str | None,
    xml_gzip: bytes | None,
    *,
    shown: PartyInfo | None,
    situation: str | None,
    carried_keys: tuple[str, ...] = (),
) -> DocumentInput:
    """A document its reader read: ``shown`` is the party of the grid's recipient column."""
    emitter = meta.emitter
    return DocumentInput(
        product=product,
        kind=meta.kind,
        xml=xml,
        # A key out of its layout is kept (the reader warned) within the store's 50 characters.
        access_key=meta.access_key[:50],
        nsu=nsu,
        schema=schema,
        model=meta.model,
        serie=meta.serie,
        number=meta.number,
        emitter_id=emitter.doc if emitter else None,
        emitter_name=emitter.name if emitter else None,
        recipient_id=shown.doc if shown else None,
        recipient_name=shown.name if shown else None,
        parties=tuple(Party(p.role, p.doc, p.name) for p in meta.parties),
        total_cents=meta.total_cents,
        issued_at=meta.issued_at,
        direction=direction_of(company, meta),
        status=meta.status,
        situation=situation,
        xml_gzip=xml_gzip,
        carried_keys=carried_keys,
        reform=meta.reform,
        purpose=meta.purpose if isinstance(meta, NfeMeta) else None,
        referenced_keys=meta.referenced_keys if isinstance(meta, NfeMeta) else (),
    )
