"""Workstations connected to the office: heartbeats beside the capture lease (app.store.presence),
on both engines. The capture lease itself is never touched by them."""

from __future__ import annotations

from datetime import timedelta

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.lease import NodeIdentity, NodeLeases
from app.store.presence import Presence

ALFA = NodeIdentity("a" * 32, "ESTACAO-ALFA", 101)
BETA = NodeIdentity("b" * 32, "ESTACAO-BETA", 202)
TTL = timedelta(seconds=60)


def test_each_beating_workstation_is_listed_until_its_beat_expires_or_it_leaves(db: Database, clock: FakeClock) -> None:
    presence = Presence(db)
    assert presence.connected(clock.now()) == []
    started = clock.now()
    presence.beat(ALFA, started, TTL)
    clock.advance(5)
    presence.beat(BETA, clock.now(), TTL)
    clock.advance(15)
    presence.beat(ALFA, clock.now(), TTL)  # the same process beats again: connected since its first beat

    [alfa, beta] = presence.connected(clock.now())
    assert (alfa.workstation, alfa.pid, alfa.node_id) == ("ESTACAO-ALFA", 101, "a" * 32)
    assert alfa.since == started and alfa.last_seen == clock.now()
    assert (beta.workstation, beta.since) == ("ESTACAO-BETA", started + timedelta(seconds=5))

    clock.advance(50)  # beta's last beat was 65 s ago: gone (killed, its row expired)
    assert [c.workstation for c in presence.connected(clock.now())] == ["ESTACAO-ALFA"]
    presence.leave(ALFA)  # a clean stop
    assert presence.connected(clock.now()) == []


def test_a_restarted_app_is_connected_since_its_restart(db: Database, clock: FakeClock) -> None:
    presence = Presence(db)
    presence.beat(ALFA, clock.now(), TTL)
    clock.advance(30)
    restarted = NodeIdentity(ALFA.node_id, ALFA.workstation, 999)
    presence.leave(restarted)  # not its row's process: the old one stays until it expires or beats
    assert [c.pid for c in presence.connected(clock.now())] == [101]
    presence.beat(restarted, clock.now(), TTL)
    [again] = presence.connected(clock.now())
    assert (again.pid, again.since) == (999, clock.now())


def test_heartbeats_leave_the_capture_lease_alone(db: Database, clock: FakeClock) -> None:
    leases, presence = NodeLeases(db), Presence(db)
    token = leases.acquire(ALFA, clock.now(), TTL)
    presence.beat(ALFA, clock.now(), TTL)
    presence.beat(BETA, clock.now(), TTL)
    holder = leases.holder()
    assert holder is not None and holder.token == token and holder.is_(ALFA)
    assert leases.renew(token or 0, clock.now(), TTL)
    presence.leave(ALFA)
    after = leases.holder()
    assert after is not None and after.token == token and after.is_(ALFA)  # leaving is not releasing


def test_a_read_only_window_is_listed_beside_the_app_that_holds_its_folder(db: Database, clock: FakeClock) -> None:
    presence = Presence(db)
    window = NodeIdentity(ALFA.node_id, ALFA.workstation, 303)  # the same data folder, another process
    presence.beat(ALFA, clock.now(), TTL)
    presence.beat(window, clock.now(), TTL, alongside=True)
    assert [c.pid for c in presence.connected(clock.now())] == [101, 303]
    presence.leave(window, alongside=True)  # the window closes: the daemon stays listed
    assert [c.pid for c in presence.connected(clock.now())] == [101]
