"""The unit of work: what one answer changes lands together, or nothing of it does."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.core.products import Environment
from app.store.audit import AuditRepository
from app.store.cursors import CaptureStateRepository
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.manifestations import ManifestationRepository
from app.store.records import (
    CallOutcome,
    CallRecord,
    CaptureState,
    Company,
    DocumentStatus,
    Product,
    RunStatus,
    StoredDocument,
)
from app.store.recoveries import GapRecoveryRepository
from app.store.runs import RunRepository
from app.store.unit import write_unit
from tests.store.test_documents import KEY, _res_nfe, _summary_input


class Boom(Exception):
    pass


def _call(clock: FakeClock, company: Company, run_id: int | None) -> CallRecord:
    return CallRecord(
        service="nfe_distribuicao",
        outcome=CallOutcome.OK,
        at=clock.now(),
        duration_ms=12,
        company_id=company.id,
        product=Product.NFE,
        operation="distNSU",
        cstat="138",
        run_id=run_id,
    )


def _answer(db: Database, clock: FakeClock, company: Company, *, fail: bool) -> None:
    with write_unit(db) as unit:
        run_id = unit.start_run("nfe_distribution", "scheduler", company_id=company.id, product=Product.NFE)
        [stored] = unit.store_lot(company.id, [_summary_input(_res_nfe())])
        assert isinstance(stored, StoredDocument) and stored.created
        unit.save_state(CaptureState(company.id, Product.NFE, ult_nsu=10, max_nsu=10))
        call_id = unit.log_call(_call(clock, company, run_id))
        unit.archive("nfe_distribuicao", company.id, call_id, b"<pedido/>", b"<resposta/>")
        unit.request_manifestation(
            company.id, Product.NFE, KEY, "210210", not_before=clock.now() + timedelta(minutes=5), automatic=True
        )
        unit.add_recoveries(company.id, Product.NFE, next_attempt_at=clock.now(), nsus=(7, 8))
        assert unit.mark_cancelled(company.id, Product.NFE, [KEY]) == 1
        unit.finish_run(run_id, RunStatus.SUCCEEDED, "1 consulta(s), 1 documento(s).")
        if fail:
            raise Boom


def test_a_unit_commits_everything_together(db: Database, company: Company, clock: FakeClock) -> None:
    _answer(db, clock, company, fail=False)
    summary = DocumentRepository(db).find(company.id, Product.NFE, KEY)
    assert summary is not None and summary.status is DocumentStatus.CANCELLED
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 10
    [call] = AuditRepository(db).recent_calls()
    assert call.cstat == "138" and call.run_id is not None
    assert RunRepository(db).get(call.run_id).status is RunStatus.SUCCEEDED
    [ciencia] = ManifestationRepository(db).for_key(company.id, Product.NFE, KEY)
    assert ciencia.tp_evento == "210210" and ciencia.automatic
    assert [g.nsu for g in GapRecoveryRepository(db).pending(company.id, Product.NFE)] == [7, 8]


def test_a_failing_unit_leaves_nothing_behind(db: Database, company: Company, clock: FakeClock) -> None:
    with pytest.raises(Boom):
        _answer(db, clock, company, fail=True)
    assert DocumentRepository(db).find(company.id, Product.NFE, KEY) is None
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 0
    assert AuditRepository(db).recent_calls() == []
    assert RunRepository(db).recent() == []
    assert ManifestationRepository(db).for_key(company.id, Product.NFE, KEY) == []
    assert GapRecoveryRepository(db).pending(company.id, Product.NFE) == []


def test_a_refused_state_aborts_the_unit(db: Database, company: Company) -> None:
    with pytest.raises(Exception, match="NSU negativo"), write_unit(db) as unit:
        unit.save_state(CaptureState(company.id, Product.NFE, ult_nsu=-1))
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 0


def test_state_marks_move_after_every_committed_state_write(db: Database, company: Company, clock: FakeClock) -> None:
    marks = db.state_marks
    other = company.id + 1
    before, before_other = marks.token(company.id), marks.token(other)
    with write_unit(db) as unit:  # a unit without a state (a Ciência's) marks nothing
        unit.log_call(_call(clock, company, None))
    assert marks.token(company.id) == before
    _answer(db, clock, company, fail=False)
    after_unit = marks.token(company.id)
    assert after_unit != before and marks.token(other) == before_other
    cursors = CaptureStateRepository(db)
    cursors.save(CaptureState(company.id, Product.NFE, ult_nsu=11, max_nsu=11))
    after_save = marks.token(company.id)
    assert after_save != after_unit
    cursors.set_pause(Product.NFE, Environment.HOMOLOGACAO, clock.now() + timedelta(minutes=5), "108")
    assert marks.token(company.id) != after_save and marks.token(other) != before_other
