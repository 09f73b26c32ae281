"""The store inputs every product builds alike (``app.capture.engine.inputs``), read back from SQLite."""

from __future__ import annotations

from dataclasses import replace

from app.capture.engine import inputs
from app.core.documents import Direction, DocumentKind
from app.core.ids import Cnpj
from app.core.products import Product
from app.documents.model import EventMeta, NfeMeta
from app.documents.nfe import read_nfe_document
from app.fiscal.distribution import DistributedDocument
from app.safexml.errors import XmlRejected
from app.store.records import DocumentInput, StoredDocument
from tests.conftest import FIXTURES
from tests.support.nfe_harness import Harness

PROC = FIXTURES / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml"
EVENT = FIXTURES / "nfe" / "procEventoNFe-210200-real-2016.xml"


def _stored(harness: Harness, *items: DocumentInput) -> list[object]:
    with harness.ctx.unit() as unit:
        return list(unit.store_lot(harness.company.id, items))


def test_an_undecodable_doczip_is_kept_in_quarantine_as_it_arrived(harness: Harness) -> None:
    raw = "H4sIAAAA*não é base64*"
    broken = DistributedDocument(5, "resNFe_v1.01.xsd", None, XmlRejected("Conteúdo gzip inválido."), raw)
    item = inputs.undecoded(Product.NFE, broken)
    # Base64 is ASCII: a stray character the service sent is kept as "?" rather than refused.
    assert (item.kind, item.access_key, item.nsu, item.xml) == (
        DocumentKind.UNKNOWN,
        None,
        5,
        b"H4sIAAAA*n?o ? base64*",
    )
    assert item.parse_error == "Conteúdo gzip inválido."
    silent = DistributedDocument(6, "resNFe_v1.01.xsd", None, None, raw)
    assert inputs.undecoded(Product.NFE, silent).parse_error == "Conteúdo do docZip ilegível."  # a reason, always
    _stored(harness, item, inputs.undecoded(Product.NFE, silent))
    assert harness.ctx.items.quarantined(harness.company.id, Product.NFE, (5, 6, 7)) == {5, 6}
    assert harness.ctx.items.received(harness.company.id, Product.NFE, 1, 10) == [5, 6]  # the cursor may pass


def test_an_unknown_root_is_kept_readable_with_what_it_is(harness: Harness) -> None:
    xml = b"<GTVeProc><GTVe/></GTVeProc>"
    item = inputs.unknown(Product.CTE, xml, 9, "procGTVe_v4.00.xsd", "GTV-e: guardada como recebida.", None)
    assert item.parse_error is None and item.situation == "GTV-e: guardada como recebida."
    [stored] = _stored(harness, item)
    assert isinstance(stored, StoredDocument) and stored.created
    assert harness.ctx.items.quarantined(harness.company.id, Product.CTE, (9,)) == set()  # kept, not quarantined
    assert harness.ctx.items.received(harness.company.id, Product.CTE, 9, 9) == [9]


def test_a_document_is_emitted_only_when_the_company_is_its_emitter_alone(harness: Harness) -> None:
    xml = PROC.read_bytes()
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta) and meta.emitter is not None and meta.recipient is not None

    def built(company: str) -> DocumentInput:
        return inputs.document(
            Product.NFE, Cnpj(company), meta, xml, 11, "procNFe_v4.00.xsd", None, shown=meta.recipient, situation=None
        )

    assert built(meta.emitter.doc).direction is Direction.EMITTED
    received = built(meta.recipient.doc)
    assert received.direction is Direction.RECEIVED
    assert (received.access_key, received.emitter_id, received.recipient_id) == (
        meta.access_key,
        meta.emitter.doc,
        meta.recipient.doc,
    )
    assert received.total_cents == meta.total_cents and received.total_cents is not None
    assert {p.tax_id for p in received.parties} >= {meta.emitter.doc, meta.recipient.doc}
    _stored(harness, received)
    found = harness.ctx.documents.find(harness.company.id, Product.NFE, meta.access_key)
    assert found is not None and found.kind is DocumentKind.NFE_PROC and found.nsu == 11
    assert harness.ctx.documents.get_xml(harness.company.id, Product.NFE, meta.access_key) == xml  # byte-exact


def test_a_key_out_of_its_layout_fits_the_stores_fifty_characters() -> None:
    xml = PROC.read_bytes()
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta)
    long_key = replace(meta, access_key=meta.access_key + "X" * 20)
    item = inputs.document(
        Product.NFE, Cnpj("11222333000181"), long_key, xml, 1, None, None, shown=None, situation=None
    )
    assert item.access_key == long_key.access_key[:50] and len(item.access_key or "") == 50
    assert (item.recipient_id, item.recipient_name) == (None, None)  # nobody shown


def test_an_event_keeps_the_instant_its_product_records(harness: Harness) -> None:
    xml = EVENT.read_bytes()
    meta = read_nfe_document(xml)
    assert isinstance(meta, EventMeta) and meta.registered_at is not None
    item = inputs.event(Product.NFE, meta, xml, 12, "procEventoNFe_v1.00.xsd", None, event_at=meta.registered_at)
    assert (item.access_key, item.tp_evento, item.n_seq_evento) == (meta.access_key, "210200", 1)
    assert item.event_at == meta.registered_at and item.author_id == meta.author_doc
    _stored(harness, item)  # type: ignore[arg-type]
    [event] = harness.ctx.events.for_key(harness.company.id, Product.NFE, meta.access_key)
    assert (event.tp_evento, event.author_id) == ("210200", meta.author_doc)
