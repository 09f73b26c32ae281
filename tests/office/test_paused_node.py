"""A node paused past its lease (SIGSTOP: a suspended laptop, a frozen VM) wakes up fenced.

A captures for the office, B stands by. A is frozen in the middle of a chained lot; B takes the
lease over and finishes the chain. A is thawed: whatever it was doing when it froze cannot commit
(the fence), it goes back to standby by itself and never queries again; nothing is lost or stored
twice, no cursor moves back, the referee sees no rule broken.

POSIX only: Windows has no SIGSTOP (a suspended process there is ``NtSuspendProcess``); the same
logic on the virtual clock, which stands for it on Windows, is
``tests/office/test_node.py::test_a_node_paused_past_its_lease_commits_no_lot_and_stands_by``.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.office.rig import office_rig
from tests.support.crash import _chained, _ours, ask_graceful_stop

STANDBY_LINE = "Captura: estação"
DEMOTED = "deixou de ser o nó de captura"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP/SIGCONT are POSIX signals")


def test_a_node_thawed_after_another_took_over_commits_nothing_and_stands_by(tmp_path: Path, postgres_url: str) -> None:
    with office_rig(tmp_path, postgres_url) as rig:
        first, second = rig.cnpjs
        rig.publish(first, 4)
        rig.spawn("A")
        rig.wait_for(lambda: rig.holder_is("A"), 60, "A holding the lease")
        rig.spawn("B")
        rig.wait_for(lambda: STANDBY_LINE in rig.stations["B"].log_text(), 60, "B standing by")
        rig.wait_for(rig.caught_up, 60, "A capturing the backlog")

        seen = len(rig.sandbox.referee.requests)
        rig.publish(second, 130)
        rig.wait_for(lambda: any(_chained(r) for r in _ours(rig.sandbox.referee.requests[seen:])), 60, "a chained lot")
        pid_a = rig.pid("A")
        assert pid_a is not None
        os.kill(pid_a, signal.SIGSTOP)
        try:
            rig.wait_for(lambda: rig.holder_is("B"), 90, "B taking the lease of the frozen A")
            rig.wait_for(rig.caught_up, 90, "B finishing the chain")
        finally:
            os.kill(pid_a, signal.SIGCONT)
        log_a = rig.stations["A"].data_dir / "logs" / "captura.log"
        rig.wait_for(lambda: DEMOTED in log_a.read_text(errors="replace"), 60, "A standing by after the thaw")
        asked_by_a = rig.stations["A"].door.count()

        for cnpj in rig.cnpjs:
            rig.publish(cnpj, 3)
        rig.wait_for(rig.caught_up, 90, "B capturing what arrives after the thaw")
        assert rig.holder_is("B") and rig.pid("A") is not None  # A alive, standing by
        assert rig.stations["A"].door.count() == asked_by_a  # the thawed node queried nobody

        for name in ("A", "B"):
            process = rig.stations[name].process
            assert process is not None
            ask_graceful_stop(process)
            assert process.wait(60) == 0, rig.stations[name].log_text()[-2000:]
        stored = rig.stored_nsus()
        for cnpj, published in rig.published_nsus().items():
            assert sorted(stored[cnpj]) == sorted(published), cnpj
        for cnpj, history in rig.cursor_history.items():
            assert history == sorted(history), (cnpj, history)
        assert rig.sandbox.referee.report()["violations"] == []
