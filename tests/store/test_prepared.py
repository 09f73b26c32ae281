"""Prepared statements read back exactly what the ORM reads; the new one-read helpers."""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path

import pytest

from app.core.clock import FakeClock
from app.core.products import Environment
from app.store.companies import CompanyRepository
from app.store.cursors import CaptureStateRepository
from app.store.db import Database, open_database
from app.store.events import EventRepository
from app.store.items import DistributionItemRepository
from app.store.manifestations import ManifestationRepository
from app.store.models import DistributionItemRow
from app.store.prepared import RowInsert
from app.store.records import CaptureSettings, CaptureState, Company, DocumentKind, EventInput, Product
from app.store.recoveries import GapRecoveryRepository
from tests.store.conftest import CNPJ_B

KEY = "35261111222333000181550010000000011000000010"


def test_state_and_pause_read_in_one_snapshot_match_the_saved_values(
    db: Database, company: Company, clock: FakeClock
) -> None:
    cursors = CaptureStateRepository(db)
    state, pause = cursors.get_with_pause(company.id, Product.NFE, Environment.PRODUCAO)
    assert state == CaptureState(company.id, Product.NFE) and pause is None
    saved = CaptureState(
        company.id,
        Product.NFE,
        ult_nsu=41,
        max_nsu=90,
        last_query_at=clock.now(),
        next_query_at=clock.now() + timedelta(minutes=61, microseconds=7),
        paused=True,
        consecutive_failures=2,
        last_cstat="137",
        wait_reason="Aguardando 1 h.",
    )
    cursors.save(saved)
    until = clock.now() + timedelta(minutes=5)
    cursors.set_pause(Product.NFE, Environment.PRODUCAO, until, "Serviço paralisado", "108")
    state, pause = cursors.get_with_pause(company.id, Product.NFE, Environment.PRODUCAO)
    assert state == saved == cursors.get(company.id, Product.NFE)
    assert state.next_query_at is not None and state.next_query_at.tzinfo is not None
    assert pause is not None and (pause.paused_until, pause.cstat) == (until, "108")
    assert cursors.get_with_pause(company.id, Product.NFE, Environment.HOMOLOGACAO)[1] is None


def test_enabled_snapshot_follows_every_change_even_at_the_same_instant(db: Database, company: Company) -> None:
    mine, other = CompanyRepository(db), CompanyRepository(db)  # two repositories over one database
    mine.save_settings(CaptureSettings(company.id, Product.NFE))
    first = mine.enabled_snapshot(Product.NFE)
    assert [c.id for c, _ in first] == [company.id]
    assert mine.enabled_snapshot(Product.NFE) is first  # nothing changed: no second read
    other.save_settings(CaptureSettings(company.id, Product.NFE, auto_ciencia=True))  # same clock instant
    assert mine.enabled_snapshot(Product.NFE)[0][1].auto_ciencia is True
    second = other.add(CNPJ_B, "Beta Ltda")
    other.save_settings(CaptureSettings(second.id, Product.NFE))
    assert [c.id for c, _ in mine.enabled_snapshot(Product.NFE)] == [company.id, second.id]
    other.update(second.id, active=False)
    assert [c.id for c, _ in mine.enabled_snapshot(Product.NFE)] == [company.id]


def test_enabled_snapshot_sees_a_change_made_by_another_connection(
    db: Database, db_target: Path | str, company: Company, clock: FakeClock
) -> None:
    mine = CompanyRepository(db)
    mine.save_settings(CaptureSettings(company.id, Product.NFE))
    assert mine.enabled_snapshot(Product.NFE)
    clock.advance(timedelta(seconds=1))
    elsewhere = open_database(db_target, clock=clock)  # another process's view: no shared counter
    try:
        CompanyRepository(elsewhere).save_settings(CaptureSettings(company.id, Product.NFE, enabled=False))
    finally:
        elsewhere.close()
    assert mine.enabled_snapshot(Product.NFE) == ()


def test_received_since_counts_every_company_in_one_read(db: Database, company: Company, clock: FakeClock) -> None:
    other = CompanyRepository(db).add(CNPJ_B, "Beta Ltda")
    items = DistributionItemRepository(db)
    items.record(company.id, Product.NFE, 1)
    clock.advance(timedelta(hours=2))
    since = clock.now()
    for nsu in (2, 3, 4):
        items.record(company.id, Product.NFE, nsu)
    items.record(other.id, Product.NFE, 1)
    items.record(other.id, Product.CTE, 1)
    assert items.count_received_since(Product.NFE, since) == {company.id: 3, other.id: 1}
    assert items.count_received_since(Product.CTE, since) == {other.id: 1}
    assert items.count_received_since(Product.NFSE, since) == {}


def test_keys_with_a_cancellation_in_one_read(db: Database, company: Company, clock: FakeClock) -> None:
    events = EventRepository(db)
    other_key = KEY[:-1] + "9"
    events.store(
        company.id,
        EventInput(
            product=Product.NFE,
            kind=DocumentKind.PROC_EVENTO_NFE,
            xml=b"<procEventoNFe/>",
            access_key=KEY,
            tp_evento="110111",
            n_seq_evento=1,
            event_at=clock.now(),
        ),
    )
    assert events.keys_with_event(company.id, Product.NFE, [KEY, other_key], ("110111", "110112")) == {KEY}
    assert events.keys_with_event(company.id, Product.NFE, [KEY], ("110110",)) == set()
    assert events.keys_with_event(company.id, Product.NFE, [], ("110111",)) == set()


def test_next_due_times_are_the_earliest_pending(db: Database, company: Company, clock: FakeClock) -> None:
    manifestations, recoveries = ManifestationRepository(db), GapRecoveryRepository(db)
    assert manifestations.next_not_before() is None
    assert recoveries.next_attempt_at(Product.NFE) is None
    later, sooner = clock.now() + timedelta(minutes=30), clock.now() + timedelta(minutes=10)
    manifestations.request(company.id, Product.NFE, KEY, "210210", not_before=later)
    manifestations.request(company.id, Product.NFE, KEY[:-1] + "9", "210210", not_before=sooner)
    assert manifestations.next_not_before() == sooner
    recoveries.add(company.id, Product.NFE, next_attempt_at=later, nsus=(7,))
    recoveries.add(company.id, Product.NFE, next_attempt_at=sooner, nsus=(8,))
    recoveries.add(company.id, Product.CTE, next_attempt_at=clock.now(), nsus=(1,))
    found = recoveries.next_attempt_at(Product.NFE)
    assert found == sooner and found is not None and found.tzinfo is UTC


def test_a_row_insert_must_name_every_column_of_its_table() -> None:
    columns = ("company_id", "product", "nsu", "schema", "document_id", "event_id", "received_at")
    insert = RowInsert(DistributionItemRow.__table__, columns, omit=("id",))
    assert insert.sql.startswith("INSERT INTO distribution_items (company_id, product, nsu,")
    with pytest.raises(AssertionError, match="distribution_items"):
        RowInsert(DistributionItemRow.__table__, columns[:-1], omit=("id",))  # received_at forgotten
    with pytest.raises(AssertionError):
        RowInsert(DistributionItemRow.__table__, columns)  # the id neither given nor omitted
