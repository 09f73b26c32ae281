"""The capture node on the virtual clock (app.capture.node): takeover times, the fence on a real
lot, standby without certificates, the hand-over of a clean stop.

Two workstations in one process: each its own ``Office`` (its own ``Database`` object, so its own
fence) on the one database file of the harness; the NF-e engine talks to the sandbox over real
mutual TLS. The node's own thread is not started: each test ticks it on the clock's steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.node import NODE_ID_NAME, CaptureNode, LeaseTiming, node_identity
from app.capture.office import Office
from app.capture.service import CaptureService
from app.core.cadence import display_time
from app.core.products import Product
from app.desk.desk import Desk
from app.desk.errors import DeskError
from app.desk.nodes import holds_certificates, node_view
from app.store.dialect import IDLE_IN_TRANSACTION_TIMEOUT, SESSION_OPTIONS
from app.store.errors import StorageUnavailable
from app.store.lease import LeaseLost, NodeIdentity, NodeLeases
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfe_harness

ALFA = NodeIdentity("a" * 32, "ESTACAO-ALFA", 101)
BETA = NodeIdentity("b" * 32, "ESTACAO-BETA", 202)
TIMING = LeaseTiming()  # the defaults: 60 s, renewed every 20 s


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as h:
        yield h


@pytest.fixture
def second(harness: Harness, tmp_path: Path) -> Iterator[Office]:
    """Workstation B: its own data folder, the same database (as the office's server)."""
    assert harness.office.db.path is not None
    with Office(tmp_path / "estacao-b", clock=harness.clock, database=str(harness.office.db.path)) as office:
        yield office


def _node(service: CaptureService, identity: NodeIdentity, **options: object) -> CaptureNode:
    return CaptureNode(service, identity, timing=TIMING, **options)  # type: ignore[arg-type]


def _idle_service(office: Office) -> CaptureService:
    """A service with no product engine: its start and stop are real, it queries nobody."""
    return CaptureService(office.capture_context(), captures={})


def test_the_standby_takes_over_within_two_minutes_of_the_node_stopping_renewals(
    harness: Harness, second: Office
) -> None:
    a = _node(_idle_service(harness.office), ALFA)
    b = _node(_idle_service(second), BETA)
    a.tick()
    b.tick()
    assert a.holding and not b.holding and a.may_query() and not b.may_query()
    stopped_renewing = harness.clock.now()
    while not b.holding:  # A is gone (no more ticks); B looks every renewal interval
        harness.clock.advance(TIMING.renew_every)
        b.tick()
        assert harness.clock.now() - stopped_renewing <= timedelta(minutes=2)
    assert harness.clock.now() - stopped_renewing <= TIMING.ttl + 2 * TIMING.renew_every
    assert b.service.running and b.may_query()
    b.stop(5)
    a.stop(5)


def test_a_node_paused_past_its_lease_commits_no_lot_and_stands_by(harness: Harness, second: Office) -> None:
    # The node's service on the harness's context (its database, so its fence) with its scheduler
    # idle: the engine's run is driven here, at the moment chosen, not by a background pass.
    service = CaptureService(harness.ctx, captures={})
    a = _node(service, ALFA)
    a.tick()
    assert a.holding and harness.ctx.db.fence is not None
    for _ in range(3):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    before = harness.ctx.cursors.get(harness.company.id, Product.NFE)

    b = _node(_idle_service(second), BETA)
    b.tick()  # B sees A's lease
    harness.clock.advance(TIMING.ttl)  # A paused: no renewal for a whole lease; B takes the office over
    b.tick()
    assert b.holding

    # A wakes up in the middle of its run: the answer comes, its lot's transaction is fenced.
    with pytest.raises(LeaseLost):
        harness.capture.distribution.run_company(harness.company.id)
    after = harness.ctx.cursors.get(harness.company.id, Product.NFE)
    assert after.ult_nsu == before.ult_nsu  # the cursor did not move
    assert harness.ctx.items.received(harness.company.id, Product.NFE, 1, 10) == []
    assert not a.may_query()  # its last renewal is older than the lease

    a.tick()  # the renewal is refused: back to standby, the service stopped
    assert not a.holding and not service.running and harness.ctx.db.fence is None
    assert service.dispatch_manifestations() == 0  # the gate stays shut
    b.stop(5)  # B hands the office back: A, standing by, captures again (its service restarted)
    a.tick()
    assert a.holding and service.running and a.may_query() and a.token == 3
    a.stop(5)


def test_a_workstation_without_the_certificates_never_takes_over(harness: Harness, second: Office) -> None:
    assert not holds_certificates(second)  # the companies are registered, B's vault is empty
    assert holds_certificates(harness.office)
    b = _node(_idle_service(second), BETA, eligible=lambda: holds_certificates(second))
    b.tick()
    harness.clock.advance(timedelta(hours=1))  # nobody captures, for an hour
    b.tick()
    assert not b.holding and not b.service.running
    b.stop(5)


def test_a_clean_stop_hands_the_capture_over_at_once(harness: Harness, second: Office) -> None:
    a = _node(_idle_service(harness.office), ALFA)
    b = _node(_idle_service(second), BETA)
    a.tick()
    b.tick()
    assert a.holding and not b.holding
    assert a.stop(5)
    b.tick()  # same instant: the lease was released, not left to expire
    assert b.holding
    holder = b.holder()
    assert holder is not None and holder.is_(BETA) and holder.acquired_at == harness.clock.now()
    b.stop(5)


def test_the_status_line_says_which_workstation_captures_and_since_when(harness: Harness, second: Office) -> None:
    a = _node(_idle_service(harness.office), ALFA)
    b = _node(_idle_service(second), BETA)
    assert node_view(second.db, second.data_dir, b).text(harness.clock.now()) == (
        "Captura: nenhuma estação está capturando agora (esta estação aguarda para assumir)."
    )
    a.tick()
    took_at = harness.clock.now()
    harness.clock.advance(timedelta(minutes=5))
    a.tick()
    b.tick()
    now = harness.clock.now()
    since = display_time(took_at, now)
    assert node_view(harness.office.db, harness.office.data_dir, a).text(now) == (
        f"Captura: nesta estação (ESTACAO-ALFA) desde {since}."
    )
    assert node_view(second.db, second.data_dir, b).text(now) == (
        f"Captura: estação ESTACAO-ALFA (PID 101) desde {since}; esta estação assume se ela parar."
    )
    b.stop(5)
    a.stop(5)


def test_a_clients_fetch_by_key_is_queued_and_the_node_makes_the_query(harness: Harness, second: Office) -> None:
    a = _node(CaptureService(harness.ctx, captures={}), ALFA)  # the node, its scheduler idle
    a.tick()
    jobs = CaptureService(harness.ctx, captures={Product.NFE: harness.capture})  # its jobs, run here
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    calls_before = len(harness.sandbox.referee.requests)
    client = Desk(second.data_dir, clock=harness.clock, capture=False, database=str(harness.office.db.path))
    with client:
        outcome = client.fetch_by_key(nfe.key, harness.company.id)
        assert outcome.queued_elsewhere and outcome.status == "deferred" and not outcome.found, outcome
        assert len(harness.sandbox.referee.requests) == calls_before  # the client asked nobody
        assert jobs.dispatch_recoveries() == 1, harness.ctx.recoveries.due(harness.clock.now(), limit=5)
        rows = [r for r in client.find_key(nfe.key, (harness.company.id,)) if not r.is_event_row]
        assert len(rows) == 1 and rows[0].access_key == nfe.key
    a.stop(5)


def test_a_capture_round_on_a_client_is_refused_and_names_the_node(harness: Harness, second: Office) -> None:
    a = _node(_idle_service(harness.office), ALFA)
    a.tick()
    calls_before = len(harness.sandbox.referee.requests)
    client = Desk(second.data_dir, clock=harness.clock, capture=False, database=str(harness.office.db.path))
    with client, pytest.raises(DeskError) as refused:
        client.rounds.once()
    assert refused.value.message == (
        "A captura do escritório está com a estação ESTACAO-ALFA (PID 101): esta estação não consulta o governo."
    )
    assert len(harness.sandbox.referee.requests) == calls_before
    a.stop(5)


def test_the_node_id_is_kept_in_the_data_folder_across_restarts(tmp_path: Path) -> None:
    # Also Windows' behaviour: 32 ASCII characters and no newline, so text mode adds no "\r\n".
    first, again = node_identity(tmp_path), node_identity(tmp_path)
    assert first.node_id == again.node_id and len(first.node_id) == 32
    assert (tmp_path / NODE_ID_NAME).read_bytes() == first.node_id.encode("ascii")
    (tmp_path / NODE_ID_NAME).write_bytes(b"\xff\xfe damaged")  # a damaged file: a new id, written
    fixed = node_identity(tmp_path)
    assert fixed.node_id != first.node_id and (tmp_path / NODE_ID_NAME).read_text("ascii") == fixed.node_id


def test_a_folder_where_the_id_cannot_be_written_still_gets_a_node(tmp_path: Path) -> None:
    missing = tmp_path / "nao-existe"  # the write fails (as on a read-only share): one id per start
    assert node_identity(missing).node_id != node_identity(missing).node_id


def test_a_node_cut_off_from_the_database_stops_querying_at_once_and_resumes_on_the_same_lease(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _idle_service(harness.office)
    a = _node(service, ALFA)
    a.tick()
    token = a.token

    def unreachable(*_args: object, **_kwargs: object) -> bool:  # the fault: the server went away
        raise StorageUnavailable("Sem conexão com o banco do escritório: connection refused.")

    with monkeypatch.context() as fault:
        fault.setattr(NodeLeases, "renew", unreachable)
        a.tick()  # the first look that fails: offline, no query from now on
        assert a.offline and a.holding and not a.may_query()
        harness.clock.advance(TIMING.ttl * 3)  # away for longer than the lease: nobody took it
        a.tick()
        assert a.offline and a.holding and not a.may_query() and service.running
    a.tick()  # the server is back: the lease renewed with its own token before anything is written
    assert not a.offline and a.holding and a.may_query() and a.token == token
    holder = a.holder()
    assert holder is not None and holder.token == token and holder.renewed_at == harness.clock.now()
    a.stop(5)


def test_a_node_back_after_another_took_over_stands_by_without_writing(
    harness: Harness, second: Office, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = CaptureService(harness.ctx, captures={})
    a = _node(service, ALFA)
    a.tick()

    def unreachable(*_args: object, **_kwargs: object) -> bool:  # only A is cut off from the server
        raise StorageUnavailable("Sem conexão com o banco do escritório: connection refused.")

    b = _node(_idle_service(second), BETA)
    b.tick()
    with monkeypatch.context() as fault:
        fault.setattr(NodeLeases, "renew", unreachable)
        a.tick()
        assert a.offline
        harness.clock.advance(TIMING.ttl)
        b.tick()  # B saw A's renewal unchanged for a whole lease: the office is B's
        assert b.holding
    a.tick()  # back: the renewal with A's token is refused, so A stands by, its fence gone
    assert not a.offline and not a.holding and not service.running and harness.ctx.db.fence is None
    b.stop(5)
    a.stop(5)


def test_after_an_outage_of_the_whole_office_the_standby_lets_the_node_renew_first(
    harness: Harness, second: Office, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _node(_idle_service(harness.office), ALFA)
    b = _node(_idle_service(second), BETA)
    a.tick()
    b.tick()  # B watches A's renewals

    def unreachable(*_args: object, **_kwargs: object) -> object:  # the server is away for everyone
        raise StorageUnavailable("Sem conexão com o banco do escritório: connection refused.")

    with monkeypatch.context() as fault:
        fault.setattr(NodeLeases, "renew", unreachable)
        fault.setattr(NodeLeases, "holder", unreachable)
        harness.clock.advance(TIMING.renew_every)
        a.tick()
        b.tick()
        assert a.offline and b.offline
        harness.clock.advance(TIMING.ttl * 2)  # longer than a lease
    b.tick()  # B sees the server first: A's renewal is old, but B did not watch it for a lease
    assert not b.holding and not b.offline
    a.tick()  # A renews on its own token
    assert a.holding and a.may_query()
    harness.clock.advance(TIMING.renew_every)
    b.tick()
    assert not b.holding
    b.stop(5)
    a.stop(5)


def test_a_vanished_node_loses_its_session_before_its_lease_can_be_taken() -> None:
    """A node that vanished inside a write transaction (power cut, cable pulled: the server sees
    no close) holds the office's writer lock until the server ends its idle session; that must
    happen before a standby may take the lease (a whole TTL after the last renewal), or the
    takeover would wait on the dead node's lock past the two minutes the issue allows."""
    assert IDLE_IN_TRANSACTION_TIMEOUT < TIMING.ttl
    assert TIMING.ttl + 2 * TIMING.renew_every <= timedelta(minutes=2)
    milliseconds = int(IDLE_IN_TRANSACTION_TIMEOUT.total_seconds() * 1000)
    assert f"idle_in_transaction_session_timeout={milliseconds}" in SESSION_OPTIONS
