"""The office's PostgreSQL goes away in the middle of a capture, and comes back (issue 24).

A server of this module's own (tests.support.pg_server, stopped and started again with
``pg_ctl``: the session's cluster serves the other tests undisturbed). The capture node runs for
real (its thread, the service's scheduler and workers) on the NF-e engine, which talks to the
sandbox over real mutual TLS. The fault is exact: the server is stopped while the sandbox holds
its answer to the chain's second lot, so that answer arrives with the database gone.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from app.capture.node import CaptureNode, LeaseTiming
from app.capture.service import CaptureService
from app.core.products import Product
from app.sandbox.router import PATHS
from app.store.lease import NodeIdentity, NodeLeases
from tests.conftest import wait_until
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfe_harness
from tests.support.pg_server import SUPERUSER, PostgresServer

ALFA = NodeIdentity("a" * 32, "ESTACAO-ALFA", 101)
TIMING = LeaseTiming()  # 60 s, renewed every 20 s: the virtual clock stands still, the lease holds
LOTS = 3  # 50 documents a lot: the chain's second answer meets the server gone
_names = itertools.count(1)


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    own = PostgresServer().start()
    try:
        yield own
    finally:
        own.stop()


@pytest.fixture
def office_url(server: PostgresServer) -> Iterator[str]:
    name = f"fora{next(_names)}"
    with psycopg.connect(f"{server.address}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{server.port}/{name}"
    if not _running(server):  # a test that failed with the server away leaves it for the next one
        server.resume()


def _running(server: PostgresServer) -> bool:
    try:
        with psycopg.connect(f"{server.address}/postgres", connect_timeout=5):
            return True
    except psycopg.OperationalError:
        return False


class Outage:
    """Stops the server while the sandbox holds its answer to the ``at``-th distribution call."""

    def __init__(self, harness: Harness, server: PostgresServer, at: int) -> None:
        self.server, self.at = server, at
        self.calls = 0
        self.done = threading.Event()  # the server is down (pg_ctl returned)
        self._dispatch = harness.sandbox.router.dispatch

    def dispatch(self, request: Any) -> Any:
        response = self._dispatch(request)
        if request.path == PATHS["nfe_dist"]:
            self.calls += 1
            if self.calls == self.at:
                self.server.pause()  # the answer is on its way; the office's database is gone
                self.done.set()
        return response


def _cstats(harness: Harness) -> list[int | None]:
    return [r.cstat for r in harness.sandbox.referee.requests if r.service == "nfe_dist"]


def test_a_restart_of_the_server_mid_chain_loses_no_answer_and_the_node_resumes_by_itself(
    tmp_path: Path, server: PostgresServer, office_url: str, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    with nfe_harness(tmp_path, database=office_url) as harness:
        published = [harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key for _ in range(50 * LOTS - 10)]
        outage = Outage(harness, server, at=2)
        monkeypatch.setattr(harness.sandbox.router, "dispatch", outage.dispatch)
        service = CaptureService(harness.ctx, captures={Product.NFE: harness.capture})
        node = CaptureNode(service, ALFA, timing=TIMING)
        node.start()
        try:
            assert node.holding
            wait_until(lambda: node.offline and outage.done.is_set(), timeout=60)  # the answer could not be stored
            assert not node.may_query() and node.holding  # nothing is asked while the server is away
            calls_while_away = outage.calls
            server.resume()  # PostgreSQL back: the node finds it by itself
            wait_until(lambda: not node.offline, timeout=60)
            cursors: list[int] = []  # the cursor as seen after the server came back

            def caught_up() -> bool:
                cursors.append(harness.ctx.cursors.get(harness.company.id, Product.NFE).ult_nsu)
                return len(harness.stored_nsus()) == len(published)

            wait_until(caught_up, timeout=60)
            wait_until(lambda: service.passes[Product.NFE] >= 1 and not service.flights.snapshot(), timeout=60)
        finally:
            node.stop(10)
        assert calls_while_away == 2  # no query while the database was away
        state = harness.ctx.cursors.get(harness.company.id, Product.NFE)
        stored = harness.stored_nsus()
        assert stored == list(range(1, len(published) + 1))  # nothing lost, nothing twice
        assert state.ult_nsu == state.max_nsu == len(published)  # the cursor where the answers put it
        nsus = [e.nsu for e in harness.sandbox.entries("nfe", RECIPIENT)]
        counts = {nsu: harness.sandbox.referee.delivery_count("nfe", RECIPIENT, nsu) for nsu in nsus}
        assert set(counts.values()) == {1}, [nsu for nsu, count in counts.items() if count != 1]  # none sent twice
        assert outage.calls == LOTS  # the second answer stored from memory: never asked again
        assert cursors == sorted(cursors) and cursors[0] >= 100  # never back: the kept answer first
        assert _cstats(harness) == [138] * LOTS and harness.sandbox.referee.violations() == []  # 0 × 656
        holder = NodeLeases(harness.ctx.db).holder()
        assert holder is not None and holder.token == 1  # the same lease, re-validated, not taken anew
        gone = [r for r in caplog.records if "Sem conexão com o banco do escritório" in r.getMessage()]
        assert len([r for r in gone if r.name == "app.capture.node"]) == 1  # once per outage, not per attempt
