from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.events import EventRepository
from app.store.items import DistributionItemRepository
from app.store.records import Company, DocumentKind, EventInput, Product

KEY = "35160207705364000116550010000158771254375877"


def _event(xml: bytes, kind: DocumentKind = DocumentKind.RES_EVENTO, nsu: int = 40) -> EventInput:
    return EventInput(
        product=Product.NFE,
        kind=kind,
        xml=xml,
        access_key=KEY,
        tp_evento="210200",
        n_seq_evento=1,
        nsu=nsu,
        description="Confirmacao da Operacao",
        protocol="891160000000000",
        event_at=datetime(2016, 2, 26, 9, 0, tzinfo=timezone(timedelta(hours=-3))),
        cstat="135",
        author_id="07705364000116",
    )


def test_event_round_trip_and_link_by_key(db: Database, company: Company, fixtures_dir: Path) -> None:
    events = EventRepository(db)
    real = (fixtures_dir / "nfe/procEventoNFe-210200-real-2016.xml").read_bytes()
    stored = events.store(company.id, _event(real, DocumentKind.PROC_EVENTO_NFE))
    assert stored.created and stored.nsu_was_new
    [record] = events.for_key(company.id, Product.NFE, KEY)
    assert record.tp_evento == "210200" and record.protocol == "891160000000000"
    assert record.event_at == datetime(2016, 2, 26, 12, 0, tzinfo=UTC)
    assert events.get_xml(stored.event_id) == real
    assert DistributionItemRepository(db).received(company.id, Product.NFE, 40, 40) == [40]


def test_full_event_replaces_its_summary_but_not_the_reverse(db: Database, company: Company) -> None:
    events = EventRepository(db)
    first = events.store(company.id, _event(b"<resEvento/>", nsu=40))
    full = events.store(company.id, _event(b"<procEventoNFe/>", DocumentKind.PROC_EVENTO_NFE, nsu=41))
    late = events.store(company.id, _event(b"<resEvento>outro</resEvento>", nsu=39))
    assert full.event_id == first.event_id and full.replaced and not late.replaced
    assert events.get_xml(first.event_id) == b"<procEventoNFe/>"
    [record] = events.for_key(company.id, Product.NFE, KEY)
    assert record.kind is DocumentKind.PROC_EVENTO_NFE and record.nsu == 41
    # Every NSU was recorded even when its bytes were not kept as current.
    assert DistributionItemRepository(db).received(company.id, Product.NFE, 39, 41) == [39, 40, 41]


def test_bad_event_type_is_refused(db: Database, company: Company) -> None:
    with pytest.raises(InvalidRecord, match="Tipo de evento"):
        EventRepository(db).store(company.id, EventInput(Product.NFE, DocumentKind.RES_EVENTO, b"<x/>", KEY, "2102"))
