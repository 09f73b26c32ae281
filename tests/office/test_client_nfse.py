"""NFS-e requests from a client of the office's capture node (#24), on both engines: the taker's
manifestation and the fetch by key are queued in the database by the client (which holds no
certificate and never calls the government), sent once by the node, and their result reaches
the client: the manifestation accepted in its detail, the NFS-e in its grid.

As in tests/office/test_node.py: two workstations in one process, the node's own thread not
started (it is ticked), its jobs run here when the test says; the sandbox over real mutual TLS.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.capture.node import CaptureNode, LeaseTiming
from app.capture.service import CaptureService
from app.core.products import Product
from app.core.taker import CONFIRMACAO_TOMADOR
from app.desk.desk import Desk
from app.desk.views import GridRow
from app.store.lease import NodeIdentity
from app.store.records import GapStatus, ManifestationStatus
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, product_harness

ALFA = NodeIdentity("a" * 32, "ESTACAO-ALFA", 101)


@pytest.fixture
def harness(tmp_path: Path, office_database: str | None) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFSE, database=office_database) as h:
        yield h


@pytest.fixture
def node(harness: Harness) -> Iterator[CaptureService]:
    """Workstation A holds the lease; what it sends is run here: its jobs, on its context."""
    a = CaptureNode(CaptureService(harness.ctx, captures={}), ALFA, timing=LeaseTiming())
    a.tick()
    assert a.holding
    try:
        yield CaptureService(harness.ctx, captures={Product.NFSE: harness.capture})
    finally:
        a.stop(5)


@pytest.fixture
def client(harness: Harness, tmp_path: Path, office_database: str | None) -> Iterator[Desk]:
    """A clerk's desk: its own data folder (no certificate), the office's database."""
    database = office_database or str(harness.office.db.path)
    with Desk(tmp_path / "estacao-b", clock=harness.clock, capture=False, database=database) as desk:
        yield desk


def _sefin(harness: Harness, method: str) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "sefin" and r.operation.startswith(method))


def _row(desk: Desk, harness: Harness, key: str) -> GridRow | None:
    rows = [r for r in desk.find_key(key, (harness.company.id,)) if not r.is_event_row]
    return rows[0] if rows else None


def test_a_clients_taker_manifestation_is_sent_once_by_the_node(
    harness: Harness, node: CaptureService, client: Desk
) -> None:
    nfse = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)
    harness.run_pending()  # the node captured it
    outcome = client.manifest(harness.company.id, nfse.key, CONFIRMACAO_TOMADOR)
    assert outcome.pending and outcome.queued_elsewhere, outcome.message
    again = client.manifest(harness.company.id, nfse.key, CONFIRMACAO_TOMADOR)  # a second click: the same request
    assert again.pending and again.request is not None and outcome.request is not None
    assert again.request.id == outcome.request.id
    assert _sefin(harness, "POST") == 0  # the client sent nothing

    assert node.dispatch_manifestations() == 1
    assert node.dispatch_manifestations() == 0  # nothing left: sent once
    assert _sefin(harness, "POST") == 1
    row = _row(client, harness, nfse.key)
    assert row is not None
    [line] = client.detail(row).manifestations  # the result reaches the client
    assert line.request.status is ManifestationStatus.ACCEPTED
    [event] = harness.ctx.events.for_key(harness.company.id, Product.NFSE, nfse.key)  # the evento stored
    assert event.tp_evento == CONFIRMACAO_TOMADOR
    assert harness.sandbox.referee.report()["violations"] == []


def test_a_client_cannot_queue_what_the_taker_could_not_sign(
    harness: Harness, node: CaptureService, client: Desk
) -> None:
    nfse = harness.sandbox.publish_nfse(provider=RECIPIENT, taker=SUPPLIER)  # the company's own NFS-e
    harness.run_pending()
    outcome = client.manifest(harness.company.id, nfse.key, CONFIRMACAO_TOMADOR)
    assert outcome.refused and "própria empresa" in outcome.message, outcome.message
    assert harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, nfse.key) == []


def test_a_clients_nfse_fetch_by_key_is_queued_and_the_node_makes_the_query(
    harness: Harness, node: CaptureService, client: Desk
) -> None:
    nfse = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)  # not captured yet
    outcome = client.fetch_by_key(nfse.key, harness.company.id)
    assert outcome.queued_elsewhere and outcome.status == "deferred" and not outcome.found, outcome
    again = client.fetch_by_key(nfse.key, harness.company.id)
    assert again.status == "deferred" and "já estava agendada" in again.message, again.message
    assert _sefin(harness, "GET") == 0  # the client asked nobody
    [queued] = harness.ctx.recoveries.pending(harness.company.id, Product.NFSE)
    assert queued.access_key == nfse.key

    assert node.dispatch_recoveries() == 1
    assert node.dispatch_recoveries() == 0  # done: one query
    assert _sefin(harness, "GET") == 1
    row = _row(client, harness, nfse.key)
    assert row is not None and row.product is Product.NFSE  # the result reaches the client's grid
    assert harness.ctx.recoveries.pending(harness.company.id, Product.NFSE) == []
    local = client.fetch_by_key(nfse.key, harness.company.id)  # from the database now
    assert local.status == "local" and local.found
    assert _sefin(harness, "GET") == 1


def test_a_queued_fetch_the_sefin_does_not_answer_is_tried_again_then_found(
    harness: Harness, node: CaptureService, client: Desk
) -> None:
    nfse = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)
    client.fetch_by_key(nfse.key, harness.company.id)
    harness.sandbox.inject_fault("sefin", "http_503", count=1)
    assert node.dispatch_recoveries() == 1
    [queued] = harness.ctx.recoveries.pending(harness.company.id, Product.NFSE)
    assert queued.status is GapStatus.PENDING and queued.attempts == 1 and queued.last_error
    assert queued.next_attempt_at > harness.clock.now()  # the events' backoff
    assert node.dispatch_recoveries() == 0  # not before its time
    harness.clock.advance(queued.next_attempt_at - harness.clock.now())
    assert node.dispatch_recoveries() == 1
    assert _row(client, harness, nfse.key) is not None
    assert _sefin(harness, "GET") == 2
