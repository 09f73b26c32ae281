"""Per-document processing of the NFS-e distribution: one ADN item in, one store input out (§6.4).

Nothing is dropped: an ``ArquivoXml`` that does not decode, or bytes that are not acceptable XML
(not well formed, like a published example with a bare ``&``), become a quarantined document
with a clear message; a CNC or any unknown root is kept as ``unknown`` with a situation that says
what it is. The XML is kept byte-exact (the gzip it came in rides along for the store).

Delivery rules (§6.1, §6.4 items 7-8) are decided here, from the company's settings, and stored
with the document (``NfseDetails.withheld``): an NFS-e issued before the cutoff date is held
until the history is released; one where the company is only the prestador is "emitted", and
held while the capture of own-issued NFS-e is off. Held documents are stored, never lost, and
neither listed nor notified.

``process_nfse_xml`` is also the entry point of a document fetched by key from the Sefin
(``app.capture.nfse.fetch``): the same reader and mapping, ``nsu=None``.
"""

from __future__ import annotations

from datetime import date

from app.capture.engine import inputs
from app.core.clock import to_brasilia
from app.core.documents import Direction, DocumentStatus
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.products import Product
from app.documents.model import UnknownMeta
from app.documents.nfse import (
    CANCELLING_EVENTS,
    EVENT_LABELS,
    NfseEventMeta,
    NfseMeta,
    direction_of_nfse,
    read_nfse,
)
from app.documents.reform import from_nfse
from app.fiscal.adn import AdnDocument
from app.store.records import (
    CaptureSettings,
    DocumentInput,
    EventInput,
    NfseDetails,
    Party,
    Withheld,
)

StoreInput = DocumentInput | EventInput
PRODUCT = Product.NFSE
_KNOWN_OTHERS = {"CNC": "CNC (Cadastro Nacional de Contribuintes da NFS-e)"}


def process_document(company: Cnpj, doc: AdnDocument, settings: CaptureSettings | None) -> StoreInput:
    """Classify and extract one ADN ``LoteDFe`` item; never raises for bad content."""
    if doc.xml is None:
        error = doc.error.message if doc.error is not None else "Conteúdo do documento do ADN ilegível."
        return inputs.quarantined(PRODUCT, doc.raw_b64.encode("ascii", "replace"), doc.nsu, doc.doc_type, error)
    return process_nfse_xml(company, doc.xml, doc.nsu, settings, schema=doc.doc_type, xml_gzip=doc.xml_gzip)


def process_nfse_xml(
    company: Cnpj,
    xml: bytes,
    nsu: int | None,
    settings: CaptureSettings | None = None,
    *,
    schema: str | None = None,
    xml_gzip: bytes | None = None,
) -> StoreInput:
    """One NFS-e, DPS or event (its exact bytes) as the store keeps it; never raises for bad content.

    ``schema`` is what the service announced (the ADN's TipoDocumento); the root decides.
    """
    try:
        meta = read_nfse(xml)
    except CapturaError as error:
        return inputs.quarantined(
            PRODUCT, xml, nsu, schema, f"NFS-e não pôde ser lida e ficou em quarentena: {error.message}", xml_gzip
        )
    if isinstance(meta, NfseEventMeta):
        return _event_input(meta, xml, nsu, xml_gzip)
    if isinstance(meta, UnknownMeta):
        what = _KNOWN_OTHERS.get(meta.root)
        situation = f"{what}: guardado como recebido." if what else f"Documento não reconhecido (raiz <{meta.root}>)"
        return inputs.unknown(PRODUCT, xml, nsu, schema or meta.root, situation, xml_gzip)
    return _document_input(company, meta, xml, nsu, settings, xml_gzip)


def withheld_for(settings: CaptureSettings | None, direction: Direction, issued: date | None) -> Withheld | None:
    """The delivery rule that holds a document back now, if any (cutoff first)."""
    if settings is None:
        return None
    cutoff = settings.nfse_cutoff_date
    if cutoff is not None and not settings.nfse_history_released and issued is not None and issued < cutoff:
        return Withheld.CUTOFF
    if direction is Direction.EMITTED and not settings.nfse_capture_own_issued:
        return Withheld.OWN_ISSUED
    return None


def _document_input(
    company: Cnpj,
    meta: NfseMeta,
    xml: bytes,
    nsu: int | None,
    settings: CaptureSettings | None,
    xml_gzip: bytes | None,
) -> DocumentInput:
    provider = meta.emitter or meta.provider
    taker = meta.taker
    direction = direction_of_nfse(company, meta)
    issued = to_brasilia(meta.issued_at).date() if meta.issued_at is not None else meta.competence
    ibscbs = meta.ibscbs
    details = NfseDetails(
        competence=meta.competence,
        processed_at=meta.processed_at,
        national_code=meta.national_code,
        municipal_code=meta.municipal_code,
        nbs=meta.nbs,
        description=meta.description,
        incidence_code=meta.incidence_code,
        incidence_name=meta.incidence_name,
        service_cents=meta.service_cents,
        net_cents=meta.net_cents,
        iss_rate=meta.iss_rate,
        iss_cents=meta.iss_cents,
        retained_cents=meta.retained_cents,
        iss_retention=meta.iss_retention,
        intermediary_id=meta.intermediary.doc if meta.intermediary else None,
        ibscbs_base_cents=ibscbs.base_cents if ibscbs else None,
        ibscbs_total_cents=ibscbs.total_cents if ibscbs else None,
        ibs_cents=ibscbs.ibs_cents if ibscbs else None,
        cbs_cents=ibscbs.cbs_cents if ibscbs else None,
        replaced_key=meta.replaced_key,
        withheld=withheld_for(settings, direction, issued) if meta.access_key else None,
    )
    return DocumentInput(
        product=PRODUCT,
        kind=meta.kind,
        xml=xml,
        access_key=meta.access_key[:50] if meta.access_key else None,
        nsu=nsu,
        schema="NFSe" if meta.access_key else "DPS",
        serie=_serie(meta.serie),
        number=meta.number if meta.number is not None else meta.dps_number,
        emitter_id=provider.doc if provider else None,
        emitter_name=provider.name if provider else None,
        recipient_id=taker.doc if taker else None,
        recipient_name=taker.name if taker else None,
        parties=tuple(Party(p.role, p.doc, p.name) for p in meta.parties if p.doc or p.name),
        total_cents=meta.service_cents,
        issued_at=meta.issued_at,
        direction=direction,
        status=meta.status if meta.access_key else DocumentStatus.UNKNOWN,
        situation=meta.situation or ("DPS (declaração do prestador)" if not meta.access_key else None),
        xml_gzip=xml_gzip,
        nfse=details,
        reform=from_nfse(ibscbs),
    )


def _serie(text: str | None) -> int | None:
    return int(text) if text and text.isascii() and text.isdigit() and len(text) <= 9 else None


def _event_input(meta: NfseEventMeta, xml: bytes, nsu: int | None, xml_gzip: bytes | None) -> EventInput:
    return EventInput(
        product=PRODUCT,
        kind=meta.kind,
        xml=xml,
        access_key=meta.access_key[:50],
        tp_evento=meta.tp_evento,
        n_seq_evento=meta.n_seq_evento,
        nsu=nsu,
        # The root, which decides: a registered ``evento`` or only its request (``pedRegEvento``).
        schema=meta.root,
        description=(meta.description or EVENT_LABELS.get(meta.tp_evento, ""))[:200] or None,
        event_at=meta.registered_at or meta.event_at,
        author_id=meta.author_doc,
        xml_gzip=xml_gzip,
        substitute_key=meta.substitute_key[:50] if meta.substitute_key else None,
    )


def is_registered_cancellation(item: StoreInput) -> bool:
    """A registered event that ends its NFS-e's validity (cancellation, substitution, ofício)."""
    return isinstance(item, EventInput) and item.schema == "evento" and item.tp_evento in CANCELLING_EVENTS


def notifies(settings: CaptureSettings | None, item: StoreInput) -> bool:
    """Whether an item counts in the "documents received" notice: not quarantined, not held back."""
    if isinstance(item, EventInput):
        return True
    if item.parse_error:
        return False
    return item.nfse is None or item.nfse.withheld is None


__all__ = [
    "PRODUCT",
    "is_registered_cancellation",
    "notifies",
    "process_document",
    "process_nfse_xml",
    "withheld_for",
]


process_xml = process_nfse_xml  # the name app.capture.nfse.fetch imports
