from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.store.cursors import CaptureStateRepository
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.records import CaptureState, Company, Environment, Product


def test_a_company_never_queried_starts_at_nsu_zero(db: Database, company: Company) -> None:
    assert CaptureStateRepository(db).get(company.id, Product.NFE) == CaptureState(company.id, Product.NFE)


def test_state_round_trip_keeps_every_field(db: Database, company: Company, clock: FakeClock) -> None:
    repo = CaptureStateRepository(db)
    now = clock.now()
    state = CaptureState(
        company_id=company.id,
        product=Product.NFE,
        ult_nsu=6811,
        max_nsu=6991,
        last_query_at=now,
        last_dh_resp=now + timedelta(seconds=2),
        clock_offset_ms=2000,
        next_query_at=now + timedelta(minutes=62),
        wait_reason="fila vazia (137)",
        blocked_until=now + timedelta(hours=1),
        block_reason="consumo indevido (656)",
        point_queries_blocked_until=now + timedelta(hours=1),
        paused=True,
        consecutive_failures=3,
        last_cstat="656",
        last_message="Rejeicao: Consumo Indevido",
        disabled_reason=None,
    )
    repo.save(state)
    assert repo.get(company.id, Product.NFE) == state
    later = replace(state, ult_nsu=6991, paused=False)
    repo.save(later)
    assert repo.get(company.id, Product.NFE) == later
    assert repo.list_states(Product.NFE) == [later]
    assert repo.list_states(Product.CTE) == []


def test_negative_nsu_is_refused(db: Database, company: Company) -> None:
    with pytest.raises(InvalidRecord):
        CaptureStateRepository(db).save(CaptureState(company.id, Product.NFE, ult_nsu=-1))


def test_global_pause_set_read_and_clear(db: Database, clock: FakeClock) -> None:
    repo = CaptureStateRepository(db)
    until = clock.now() + timedelta(minutes=5)
    repo.set_pause(Product.NFE, Environment.PRODUCAO, until, "serviço paralisado", "108")
    repo.set_pause(Product.NFE, Environment.PRODUCAO, until + timedelta(minutes=15), "sem previsão", "109")
    pause = repo.get_pause(Product.NFE, Environment.PRODUCAO)
    assert pause is not None and pause.cstat == "109" and pause.paused_until == until + timedelta(minutes=15)
    assert repo.get_pause(Product.NFE, Environment.HOMOLOGACAO) is None
    repo.clear_pause(Product.NFE, Environment.PRODUCAO)
    assert repo.get_pause(Product.NFE, Environment.PRODUCAO) is None


def test_the_call_lease_is_held_extended_and_released(db: Database, clock: FakeClock) -> None:
    repo = CaptureStateRepository(db)
    assert repo.answers_lease(Product.NFE) is None
    repo.hold_answers_until(Product.NFE, clock.now() + timedelta(minutes=6))
    repo.hold_answers_until(Product.NFE, clock.now() + timedelta(minutes=11))
    assert repo.answers_lease(Product.NFE) == clock.now() + timedelta(minutes=11)
    assert repo.answers_lease(Product.CTE) is None  # one lease per product
    repo.release_answers_lease(Product.NFE)
    assert repo.answers_lease(Product.NFE) is None
