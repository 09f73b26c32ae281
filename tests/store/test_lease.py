"""The capture node's lease and its fencing token, on both engines (app.store.lease)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.core.products import Product
from app.store.cursors import CaptureStateRepository
from app.store.db import Database
from app.store.lease import DEAD_AFTER, LeaseLost, NodeIdentity, NodeLeases, fence_in, migration_refusal
from app.store.records import CaptureState, Company

TTL = timedelta(seconds=60)
ALFA = NodeIdentity("a" * 32, "ESTACAO-ALFA", 101)
BETA = NodeIdentity("b" * 32, "ESTACAO-BETA", 202)


def test_a_free_lease_goes_to_the_first_node_and_stays_with_it_while_renewed(db: Database, clock: FakeClock) -> None:
    leases = NodeLeases(db)
    first = leases.acquire(ALFA, clock.now(), TTL)
    assert first == 1
    assert leases.acquire(BETA, clock.now(), TTL) is None
    clock.advance(50)
    assert leases.renew(first, clock.now(), TTL)
    clock.advance(50)  # 100 s after the acquisition, 50 s after the renewal: still held
    assert leases.acquire(BETA, clock.now(), TTL) is None
    assert leases.acquire(BETA, clock.now(), TTL, stale=None) is None
    holder = leases.holder()
    assert holder is not None and holder.is_(ALFA) and holder.live(clock.now())
    assert holder.acquired_at == clock.now() - timedelta(seconds=100)
    assert holder.expires_at == clock.now() + timedelta(seconds=10)


def test_a_lease_seen_unrenewed_is_taken_with_a_new_token_and_the_old_holder_cannot_renew(
    db: Database, clock: FakeClock
) -> None:
    leases = NodeLeases(db)
    old = leases.acquire(ALFA, clock.now(), TTL)
    assert old is not None
    clock.advance(TTL * 10)
    assert leases.acquire(BETA, clock.now(), TTL) is None  # expired by our clock: not proof enough
    seen = leases.holder()
    assert seen is not None
    assert leases.renew(old, clock.now(), TTL)  # the holder lives: what B saw is no longer there
    assert leases.acquire(BETA, clock.now(), TTL, stale=seen) is None
    seen = leases.holder()  # B looks again, and sees no renewal for a whole lease
    new = leases.acquire(BETA, clock.now(), TTL, stale=seen)
    assert new == old + 1
    assert not leases.renew(old, clock.now(), TTL)
    assert not leases.release(old, clock.now())
    holder = leases.holder()
    assert holder is not None and holder.is_(BETA) and holder.token == new


def test_a_released_lease_is_free_at_once(db: Database, clock: FakeClock) -> None:
    leases = NodeLeases(db)
    token = leases.acquire(ALFA, clock.now(), TTL)
    assert token is not None and leases.release(token, clock.now())
    holder = leases.holder()
    assert holder is not None and not holder.live(clock.now())
    assert leases.acquire(BETA, clock.now(), TTL) == token + 1


def test_the_same_data_folder_takes_its_own_lease_back_at_once_after_a_crash(db: Database, clock: FakeClock) -> None:
    # The caller holds the folder's OS lock: the process that held the lease there is dead.
    leases = NodeLeases(db)
    before = leases.acquire(ALFA, clock.now(), TTL)
    restarted = NodeIdentity(ALFA.node_id, ALFA.workstation, 999)
    after = leases.acquire(restarted, clock.now(), TTL)
    assert before is not None and after == before + 1
    # A copy of the folder on another machine is another node: it waits like any other.
    copied = NodeIdentity(ALFA.node_id, "OUTRA-MAQUINA", 5)
    assert leases.acquire(copied, clock.now(), TTL) is None


def test_the_fence_refuses_every_write_of_a_node_whose_token_moved_on(
    db: Database, clock: FakeClock, company: Company
) -> None:
    leases = NodeLeases(db)
    cursors = CaptureStateRepository(db)
    mine = leases.acquire(ALFA, clock.now(), TTL)
    assert mine is not None
    db.fence = lambda driver: fence_in(driver, mine)
    cursors.save(CaptureState(company.id, Product.NFE, ult_nsu=10, max_nsu=10))  # ours: committed
    clock.advance(TTL)
    stale = leases.holder()  # the node paused past its lease: B takes it
    assert leases.acquire(BETA, clock.now(), TTL, stale=stale) == mine + 1
    with pytest.raises(LeaseLost, match="deixou de ser o nó de captura"):
        cursors.save(CaptureState(company.id, Product.NFE, ult_nsu=5, max_nsu=10))
    with pytest.raises(LeaseLost), db.session():  # the ORM path too
        pass
    db.fence = None
    assert cursors.get(company.id, Product.NFE).ult_nsu == 10  # the stale write left nothing


def test_the_schema_moves_on_only_when_no_node_captures(db: Database, clock: FakeClock) -> None:
    leases = NodeLeases(db)
    with db.engine.connect() as connection:
        assert migration_refusal(connection, clock.now()) is None  # nobody ever captured
    token = leases.acquire(ALFA, clock.now(), TTL)
    assert token is not None
    with db.engine.connect() as connection:
        refusal = migration_refusal(connection, clock.now())
        assert refusal is not None and refusal.startswith("A estação ESTACAO-ALFA (PID 101) está capturando")
        # A node dead for longer than clocks ever disagree: it no longer holds the office back.
        assert migration_refusal(connection, clock.now() + TTL + DEAD_AFTER) is None
    assert leases.release(token, clock.now())
    with db.engine.connect() as connection:
        assert migration_refusal(connection, clock.now()) is None
