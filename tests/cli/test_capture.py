from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from app.capture.instance import DataFolderLock
from app.config.logs import log_file
from app.core.products import Product
from tests.cli.conftest import Cli
from tests.conftest import wait_until
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _dist_requests(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_dist" and not r.competitor)


def test_once_captures_then_a_second_once_does_not_query_the_waiting_company(harness: Harness, cli: Cli) -> None:
    keys = {str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(3)}

    first = cli.json("capture", "--once")
    assert isinstance(first, dict)
    assert first["documents"] == 3 and first["queries"] >= 1
    [company] = first["companies"]
    assert company["cnpj"] == RECIPIENT and company["product"] == "nfe"
    assert company["documents"] == 3 and company["action"] == "wait"
    assert company["until"] and "até" in company["reason"]
    stored = {d["key"] for d in cli.json("documents", "list")}  # type: ignore[union-attr]
    assert stored == keys
    requests = _dist_requests(harness)
    assert requests == first["queries"]

    assert cli("capture", "--once") == 3  # nothing was due
    assert _dist_requests(harness) == requests  # the referee saw no new query
    assert "nenhuma consulta" in cli.out and "até" in cli.out
    assert "11.222.333/0001-81" in cli.out
    assert harness.sandbox.referee.report()["violations"] == []


def test_once_for_one_company_and_product_and_refusals(harness: Harness, cli: Cli) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    assert cli("capture", "--once", "--company", RECIPIENT, "--product", "nfe") == 0
    assert "1 documento(s)" in cli.out
    assert cli("capture", "--once", "--company", "99888777000100") == 1
    assert "não está cadastrada" in cli.err
    assert cli("capture", "--once", "--product", "nfse") == 3  # captured too; no company has NFS-e here
    assert cli("capture", "--once", "--product", "cte") == 3  # captured now; no company has CT-e here
    with pytest.raises(SystemExit) as usage:
        cli("capture")  # --once or --daemon is required
    assert usage.value.code == 2


def test_once_refuses_while_another_process_captures(harness: Harness, cli: Cli) -> None:
    with DataFolderLock(harness.office.data_dir):
        assert cli("capture", "--once") == 1
    assert "já está capturando" in cli.err
    assert _dist_requests(harness) == 0


def test_once_writes_the_log_in_the_data_folder(harness: Harness, cli: Cli) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    assert cli("capture", "--once") == 0
    assert log_file(harness.office.data_dir).is_file()


def test_status_json_and_table(harness: Harness, cli: Cli) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    assert cli("capture", "--once") == 0
    statuses = cli.json("status")
    assert isinstance(statuses, list)
    [status] = statuses
    assert status["cnpj"] == RECIPIENT and status["product"] == "nfe"
    assert status["label"] == "Em espera" and status["until"] and status["until"].endswith("-03:00")
    assert status["last_cstat"] in ("137", "138")
    assert status["documents_today"] == 2
    assert status["pending_recoveries"] == 0 and status["stalled"] is False
    assert cli("status") == 0
    assert "Em espera até" in cli.out and "2 documento(s) hoje" in cli.out


def test_status_with_no_company(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.launcher import main

    assert main(["--data-dir", str(tmp_path / "vazia"), "status", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM to oneself is a POSIX test")
def test_daemon_captures_until_sigterm_then_stops_gracefully(harness: Harness, cli: Cli) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    stored = threading.Event()

    def terminate_once_captured() -> None:
        try:
            wait_until(lambda: _stored(harness) > 0, timeout=30)
        finally:
            stored.set()
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=terminate_once_captured)
    helper.start()
    try:
        code = cli("capture", "--daemon")
    finally:
        helper.join(10)
    assert stored.is_set()
    assert code == 0, cli.err
    assert "Serviço de captura em execução" in cli.out and "Serviço de captura parado." in cli.out
    assert _stored(harness) == 1
    log = log_file(harness.office.data_dir).read_text(encoding="utf-8")
    assert "app." in log
    # The lock was released: a --once right after may run (and finds the company waiting).
    assert cli("capture", "--once") == 3
    assert harness.sandbox.referee.report()["violations"] == []


def _stored(harness: Harness) -> int:
    from app.store.records import DocumentQuery

    return harness.ctx.documents.count(DocumentQuery(harness.company.id, Product.NFE))
