"""Per-document processing of the CT-e distribution: one docZip in, one store input out (§5.4).

Nothing is dropped: a docZip that does not decode, or bytes that are not acceptable XML, become a
quarantined document; a GTV-e or any unknown root is kept as ``unknown`` with a situation that
says what it is. The NF-e keys a CT-e carries ride along (``carried_keys``) for the CT-e ↔ NF-e
links the adapter writes with the lot.
"""

from __future__ import annotations

from app.capture.engine import inputs
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.products import Product
from app.documents.cte import MODAL_LABELS, read_cte_document
from app.documents.model import CteMeta, EventMeta, UnknownMeta
from app.fiscal.distribution import DistributedDocument
from app.store.records import DocumentInput, EventInput

StoreInput = DocumentInput | EventInput
PRODUCT = Product.CTE
_MODELS = {"57": "CT-e", "67": "CT-e OS"}
_KNOWN_OTHERS = {"GTVeProc": "GTV-e (Guia de Transporte de Valores)", "GTVe": "GTV-e (Guia de Transporte de Valores)"}


def process_document(company: Cnpj, doc: DistributedDocument) -> StoreInput:
    """Classify and extract one distributed CT-e document; never raises for bad content."""
    if doc.xml is None:
        return inputs.undecoded(PRODUCT, doc)
    return process_xml(company, doc.xml, nsu=doc.nsu, schema=doc.schema, xml_gzip=doc.xml_gzip)


def process_xml(
    company: Cnpj, xml: bytes, *, nsu: int | None, schema: str | None, xml_gzip: bytes | None = None
) -> StoreInput:
    try:
        meta = read_cte_document(xml, schema)
    except CapturaError as error:
        return inputs.quarantined(PRODUCT, xml, nsu, schema, error.message, xml_gzip)
    if isinstance(meta, EventMeta):
        return inputs.event(PRODUCT, meta, xml, nsu, schema, xml_gzip, event_at=meta.registered_at or meta.event_at)
    if isinstance(meta, UnknownMeta):
        what = _KNOWN_OTHERS.get(meta.root)
        situation = f"{what}: guardada como recebida." if what else f"Documento não reconhecido (raiz <{meta.root}>)"
        return inputs.unknown(PRODUCT, xml, nsu, schema, situation, xml_gzip)
    if not isinstance(meta, CteMeta):  # the CT-e reader gives no NF-e; typed for the union
        return inputs.quarantined(PRODUCT, xml, nsu, schema, "Documento inesperado para CT-e.", xml_gzip)
    return _document_input(company, meta, xml, nsu, schema, xml_gzip)


def _document_input(
    company: Cnpj, meta: CteMeta, xml: bytes, nsu: int | None, schema: str | None, xml_gzip: bytes | None
) -> DocumentInput:
    # The grid's "recipient" column: who receives the cargo, else who pays (CT-e OS has no dest).
    shown = meta.recipient or meta.taker
    modal = MODAL_LABELS.get(meta.modal or "", meta.modal or "")
    label = _MODELS.get(meta.model, "CT-e")
    situation = meta.situation or None
    if modal:
        situation = f"{label} {modal}" + (f" · {situation}" if situation else "")
    return inputs.document(
        PRODUCT, company, meta, xml, nsu, schema, xml_gzip, shown=shown, situation=situation,
        carried_keys=meta.nfe_keys,
    )  # fmt: skip
