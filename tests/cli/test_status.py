"""`status` says what is true: documents counted once, labels that agree with their reasons."""

from __future__ import annotations

from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def test_documents_today_counts_documents_not_nsus(harness: Harness, cli: Cli) -> None:
    first = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.publish_nfe_event(first, "110110", correction="Correcao do endereco de entrega do destinatario")
    once = cli.json("capture", "--once")
    assert isinstance(once, dict) and once["documents"] >= 2
    stored = cli.json("documents", "list")
    assert isinstance(stored, list) and len(stored) == 2
    [status] = cli.json("status")  # type: ignore[misc]
    assert status["documents_today"] == 2  # three NSUs (two NF-e and an event): two documents
    assert cli("status") == 0
    assert "2 documento(s) hoje" in cli.out


def test_a_fresh_company_waits_for_a_capture_with_a_reason_that_agrees(harness: Harness, cli: Cli) -> None:
    [status] = cli.json("status")  # type: ignore[misc]
    assert status["label"] == "Em espera"
    assert status["reason"].startswith("Consulta liberada, feita quando a captura rodar")
    assert "a partir do NSU" not in status["reason"]
