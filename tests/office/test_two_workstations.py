"""Two workstations, one office database: exactly one captures, the other takes over.

The issue's proof of the capture node (#24): two ``capture --daemon`` processes, each with its own
data folder, on one PostgreSQL database and one sandbox (over real mutual TLS, each workstation
through its own door, so the test sees who asked). A holds the lease and captures; B stands by
and never queries. A clerk's desk (folder C, no certificate) asks for a manifestation: it is
queued in the database, sent once by A, and its result reaches the clerk. A is killed with SIGKILL
in the middle of a chained lot; B takes over within the lease, nothing is lost or stored twice, no
cursor moves back, and the referee saw no rule broken (no 656). A, restarted, stands by.
How the rig works: :mod:`tests.office.rig`.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from app.core.clock import ScaledClock
from app.desk.desk import Desk
from app.desk.views import GridRow
from app.store.dialect import IDLE_IN_TRANSACTION_TIMEOUT
from app.store.records import ManifestationStatus
from tests.office.rig import LEASE_RENEW, LEASE_TTL, OfficeRig, office_rig
from tests.support.crash import CrashPlan, _chained, _ours, ask_graceful_stop

CONFIRMACAO = "210200"
STANDBY_LINE = "Captura: estação"  # what a standing-by daemon prints (app.desk.nodes.NodeView)
# A wait that includes a child's start-up gets the crash rig's allowance for it: a Windows child
# under Wine on the loaded 2-core machine spent over 60 s importing the app before its first line.
STARTUP = CrashPlan().ready_timeout


def _clerk_manifests(rig: OfficeRig, cnpj: str) -> None:
    """On the clerk's desk (no daemon, no certificate): the request is queued for the node, which
    sends it once; the clerk's desk then reads the accepted result."""
    key = rig.keys[cnpj][0]
    company_id = rig.company_ids[cnpj]
    sent_before = rig.stations["A"].door.count("nfe_evento")
    desk = Desk(rig.stations["C"].data_dir, clock=rig.clock, capture=False, database=rig.url)
    with desk:
        outcome = desk.manifest(company_id, key, CONFIRMACAO)
        assert outcome.pending and outcome.queued_elsewhere, outcome
        assert "o enviará" in outcome.message or "pendente" in outcome.message, outcome.message

        def accepted() -> bool:
            rows: list[GridRow] = [r for r in desk.find_key(key, (company_id,)) if not r.is_event_row]
            lines = desk.detail(rows[0]).manifestations if rows else ()
            return any(line.request.status is ManifestationStatus.ACCEPTED for line in lines)

        rig.wait_for(accepted, 30, "the clerk's manifestation accepted")
    assert rig.stations["A"].door.count("nfe_evento") == sent_before + 1  # sent once, by the node
    assert rig.stations["B"].door.count("nfe_evento") == 0
    events = [r for r in rig.sandbox.referee.requests if r.service == "nfe_evento"]
    assert len(events) == 1, events


def test_one_node_captures_the_other_takes_over_when_it_is_killed(tmp_path: Path, postgres_url: str) -> None:
    with office_rig(tmp_path, postgres_url) as rig:
        clock: ScaledClock = rig.clock
        first, second = rig.cnpjs
        for cnpj in rig.cnpjs:  # a backlog waiting for the first node
            rig.publish(cnpj, 6, ago=timedelta(minutes=30))

        rig.spawn("A")
        rig.wait_for(lambda: rig.holder_is("A"), STARTUP, "A holding the lease")
        rig.spawn("B")
        rig.wait_for(lambda: STANDBY_LINE in rig.stations["B"].log_text(), STARTUP, "B standing by")
        rig.wait_for(rig.caught_up, 60, "A capturing the backlog")
        assert rig.holder_is("A")

        _clerk_manifests(rig, first)

        # A burst (three lots of 50) and the kill right after a chained answer.
        seen = len(rig.sandbox.referee.requests)
        rig.publish(second, 130)
        rig.wait_for(lambda: any(_chained(r) for r in _ours(rig.sandbox.referee.requests[seen:])), 60, "a chained lot")
        node_a = rig.stations["A"].process
        assert node_a is not None
        node_a.kill()  # SIGKILL (TerminateProcess on Windows): no handler runs, the lease stays
        killed_at = clock.now()
        node_a.wait(30)
        assert rig.stations["B"].door.count() == 0  # B never queried while A was the node

        rig.wait_for(lambda: rig.holder_is("B"), 60, "B taking the lease over")
        # A request A had written just before the kill may still reach its door after A is gone
        # (the door's thread reads it from the socket; under Wine the wineserver holds a killed
        # process's sockets a while longer): A's count is taken once the lease has changed hands.
        asked_by_a = rig.stations["A"].door.count()
        holder = rig.holder()
        assert holder is not None and holder.acquired_at is not None
        slack = timedelta(seconds=2 * clock.factor)  # two real seconds of a loaded machine's scheduling
        took = holder.acquired_at - killed_at
        # Within the lease: B takes it once A's last renewal stood unchanged for TTL, looking every RENEW.
        lease = LEASE_TTL + 2 * LEASE_RENEW
        if sys.platform == "win32":
            # Under Wine a killed process's sockets outlive it (its pending socket I/O keeps them in
            # the wineserver), so when the kill lands inside a write transaction PostgreSQL keeps A's
            # session, and its writer lock, until the idle-in-transaction timeout: 30 real seconds,
            # which the rig's clock stretches past its 3-s lease. In real time that timeout is
            # shorter than the lease (test_node), so a real node's death costs no more than the lease.
            lease = max(lease, IDLE_IN_TRANSACTION_TIMEOUT * clock.factor + LEASE_RENEW)
        assert took <= lease + slack, took
        rig.wait_for(rig.caught_up, 90, "B finishing the chain A left")

        # A comes back: it stands by, and B keeps capturing what arrives.
        rig.spawn("A")
        rig.wait_for(lambda: STANDBY_LINE in rig.stations["A"].log_text(), STARTUP, "A standing by again")
        for cnpj in rig.cnpjs:
            rig.publish(cnpj, 3)
        rig.wait_for(rig.caught_up, 90, "B capturing the new NF-e")
        assert rig.holder_is("B")
        door_a = rig.stations["A"].door
        assert door_a.count() == asked_by_a, door_a.paths[asked_by_a:]  # the standby never queried

        for name in ("A", "B"):  # graceful stops: the node releases the lease
            process = rig.stations[name].process
            assert process is not None
            ask_graceful_stop(process)
            assert process.wait(60) == 0, rig.stations[name].log_text()[-2000:]
        assert rig.holder() is None

        stored = rig.stored_nsus()
        for cnpj, published in rig.published_nsus().items():
            assert sorted(stored[cnpj]) == sorted(published), cnpj  # nothing lost, nothing twice
        for cnpj, history in rig.cursor_history.items():
            assert history == sorted(history), (cnpj, history)  # no cursor ever moved back
        assert rig.sandbox.referee.report()["violations"] == []  # no 656, no rule broken
