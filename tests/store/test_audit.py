from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from app.core.clock import FakeClock
from app.store.audit import AuditRepository, UnknownArchive
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.errors import InvalidRecord
from app.store.events import EventRepository
from app.store.records import (
    CallOutcome,
    CallRecord,
    Company,
    DocumentInput,
    DocumentKind,
    EventInput,
    Product,
    RunStatus,
)
from app.store.runs import RunRepository

KEY = "3" * 44


def _call(clock: FakeClock, company_id: int | None, cstat: str = "138") -> CallRecord:
    return CallRecord(
        service="NFeDistribuicaoDFe",
        outcome=CallOutcome.OK,
        at=clock.now(),
        duration_ms=812,
        company_id=company_id,
        product=Product.NFE,
        operation="distNSU",
        cstat=cstat,
        http_status=200,
    )


def test_log_call_and_read_back_newest_first(db: Database, company: Company, clock: FakeClock) -> None:
    audit = AuditRepository(db)
    first = audit.log_call(_call(clock, company.id, "137"))
    clock.advance(60)
    second = audit.log_call(_call(clock, None, "656"))
    calls = audit.recent_calls()
    assert [c.id for c in calls] == [second, first]
    assert (
        calls[1].cstat == "137" and calls[1].duration_ms == 812 and calls[1].at == clock.now() - timedelta(seconds=60)
    )
    assert [c.id for c in audit.recent_calls(company_id=company.id)] == [first]


def test_archived_exchange_round_trip(db: Database, company: Company, clock: FakeClock) -> None:
    audit = AuditRepository(db)
    call_id = audit.log_call(_call(clock, company.id))
    request = b"<soap:Envelope>pedido</soap:Envelope>"
    response = b"<soap:Envelope>" + b"<docZip>x</docZip>" * 500 + b"</soap:Envelope>"
    archive_id = audit.archive_exchange(
        "NFeDistribuicaoDFe", request=request, response=response, company_id=company.id, call_id=call_id
    )
    assert audit.get_exchange(archive_id) == (request, response)
    with db.reader() as s:
        size = s.execute(text("SELECT length(response_zlib) FROM archived_exchanges")).scalar_one()
    assert size < len(response) / 10
    with pytest.raises(UnknownArchive):
        audit.get_exchange(archive_id + 1)


def test_prune_removes_old_audit_rows_and_keeps_documents_and_events(
    db: Database, company: Company, clock: FakeClock
) -> None:
    audit, runs = AuditRepository(db), RunRepository(db)
    docs, events = DocumentRepository(db), EventRepository(db)
    docs.store(company.id, DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", KEY, nsu=1))
    events.store(company.id, EventInput(Product.NFE, DocumentKind.RES_EVENTO, b"<resEvento/>", KEY, "110111", nsu=2))
    old_run = runs.start("distribution", "scheduled", company_id=company.id)
    runs.finish(old_run, RunStatus.SUCCEEDED)
    stuck_run = runs.start("distribution", "scheduled")  # still running: never pruned
    old_call = audit.log_call(_call(clock, company.id))
    old_archive = audit.archive_exchange("NFeDistribuicaoDFe", request=b"a", response=b"b", call_id=old_call)

    clock.advance(timedelta(days=300))
    recent_call = audit.log_call(_call(clock, company.id))
    recent_archive = audit.archive_exchange("NFeDistribuicaoDFe", request=b"c", response=b"d", call_id=recent_call)

    clock.advance(timedelta(days=66))  # old rows are now 366 days old, recent ones 66
    result = audit.prune()
    assert (result.archives, result.calls, result.runs) == (1, 1, 1)
    with pytest.raises(UnknownArchive):
        audit.get_exchange(old_archive)
    assert audit.get_exchange(recent_archive) == (b"c", b"d")
    assert [c.id for c in audit.recent_calls()] == [recent_call]
    assert [r.id for r in runs.recent()] == [stuck_run]
    with db.reader() as s:
        for table in ("documents", "document_versions", "events", "distribution_items", "companies"):
            assert s.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() >= 1, table

    assert audit.prune(timedelta(days=30)).archives == 1
    with pytest.raises(InvalidRecord):
        audit.prune(timedelta(0))


def test_prune_works_in_batches(db: Database, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("app.store.audit._PRUNE_BATCH", 7)
    audit = AuditRepository(db)
    for _ in range(25):
        audit.archive_exchange("CTeDistribuicaoDFe", request=None, response=b"r")
    clock.advance(timedelta(days=400))
    assert audit.prune().archives == 25
