"""CT-e per-document processing: what the store gets from each docZip, and the company's filters."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from app.capture.cte.adapter import notifies
from app.capture.cte.processing import process_xml
from app.core.documents import Direction, DocumentKind, PartyRole
from app.core.ids import Cnpj
from app.core.products import Product
from app.store.records import CaptureSettings, Company, DocumentInput, EventInput

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cte"
CTE = "http://www.portalfiscal.inf.br/cte"
AIR = "bfr-dacte_aereo_test.xml"


def _company(cnpj: str) -> Company:
    return Company(1, Cnpj(cnpj), "EMPRESA", None, True, datetime(2026, 11, 1, tzinfo=UTC))


def test_a_cte_becomes_a_document_with_its_roles_value_and_carried_keys() -> None:
    item = process_xml(Cnpj("46081676000158"), (FIXTURES / AIR).read_bytes(), nsu=7, schema="procCTe_v4.00.xsd")
    assert isinstance(item, DocumentInput) and item.product is Product.CTE
    assert (item.kind, item.nsu, item.model, item.total_cents) == (DocumentKind.CTE_PROC, 7, "57", 4700)
    assert item.access_key == "35240781583054000129570010000057411040645890"
    assert (item.emitter_id, item.recipient_id) == ("81583054000129", "46081676000158")
    assert {p.role for p in item.parties} >= {PartyRole.SENDER, PartyRole.SHIPPER, PartyRole.RECEIVER, PartyRole.TAKER}
    assert item.carried_keys == ("41190806117473000150550010000586251016759484",)
    assert item.direction is Direction.RECEIVED and item.situation == "CT-e Aéreo"
    emitted = process_xml(Cnpj("81583054000129"), (FIXTURES / AIR).read_bytes(), nsu=7, schema=None)
    assert isinstance(emitted, DocumentInput) and emitted.direction is Direction.EMITTED


def test_gtv_e_unknown_and_broken_documents_are_kept() -> None:
    gtve = process_xml(Cnpj("46081676000158"), f'<GTVeProc xmlns="{CTE}"/>'.encode(), nsu=1, schema=None)
    assert isinstance(gtve, DocumentInput) and gtve.kind is DocumentKind.UNKNOWN
    assert gtve.situation is not None and gtve.situation.startswith("GTV-e") and gtve.parse_error is None
    broken = process_xml(Cnpj("46081676000158"), b"<cteProc", nsu=2, schema="procCTe_v4.00.xsd")
    assert isinstance(broken, DocumentInput) and broken.parse_error and broken.xml == b"<cteProc"


def test_filters_decide_what_notifies() -> None:
    me = _company("46081676000158")
    item = process_xml(me.cnpj, (FIXTURES / AIR).read_bytes(), nsu=7, schema=None)
    everything = CaptureSettings(1, Product.CTE)
    assert notifies(me, everything, item)
    as_payer = CaptureSettings(1, Product.CTE, cte_party_roles=(PartyRole.TAKER,))
    as_sender = CaptureSettings(1, Product.CTE, cte_party_roles=(PartyRole.SENDER,))
    assert notifies(me, as_payer, item) and not notifies(me, as_sender, item)
    event = EventInput(Product.CTE, DocumentKind.PROC_EVENTO_CTE, b"<x/>", "1" * 44, "110111")
    assert notifies(me, CaptureSettings(1, Product.CTE, cte_event_types=("110111",)), event)
    assert not notifies(me, CaptureSettings(1, Product.CTE, cte_event_types=("610110",)), event)
