"""`status` says what is true: documents counted once, labels that agree with their reasons."""

from __future__ import annotations

from datetime import timedelta

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


def _instants(value: object) -> list[str]:
    """Every ISO-looking string in a JSON answer."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _instants(v)]
    if isinstance(value, list):
        return [s for v in value for s in _instants(v)]
    return [value] if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] == "T" else []


def test_times_are_shown_to_the_second(harness: Harness, cli: Cli) -> None:
    harness.clock.advance(timedelta(microseconds=123456))  # a real clock is never on the second
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    assert cli("capture", "--once") == 0
    shown = [
        cli.json("status"),
        cli.json("capture", "--once"),
        cli.json("company", "list"),
        cli.json("documents", "show", str(nfe.key)),
    ]
    instants = _instants(shown)
    assert len(instants) >= 5
    for instant in instants:
        assert "." not in instant, instant
        assert instant.endswith("-03:00"), instant


def test_an_answer_that_carries_its_code_prints_it_once() -> None:
    from datetime import UTC, datetime

    from app.capture.status import CompanyStatus
    from app.cli.status import describe
    from app.core.products import Product

    def line(cstat: str, message: str) -> str:
        status = CompanyStatus(
            1, "11222333000181", "Empresa", Product.NFSE, "Em espera", None, "", cstat, message, 0, 0, None
        )
        return describe(status, datetime(2026, 12, 1, 12, tzinfo=UTC))

    adn = line("E2220", "E2220: Certificado não autorizado para o CNPJ.")
    assert "último cStat E2220 (Certificado não autorizado para o CNPJ.)" in adn and adn.count("E2220") == 1
    assert "último cStat 656 (Consumo indevido)" in line("656", "Consumo indevido")


def test_the_version_option_speaks_portuguese() -> None:
    from app.cli.main import build_parser

    assert "mostra a versão do programa e sai" in build_parser().format_help()
    assert "show program's version" not in build_parser().format_help()
