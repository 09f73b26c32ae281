"""`manifest KEY confirmacao-tomador|rejeicao-tomador` and `documents fetch KEY` on a data folder wired
to the sandbox (ADN and Sefin Nacional over mutual TLS, FakeClock)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.capture.instance import DataFolderLock
from app.cli.manifest import event_code
from app.core.products import Product
from app.store.records import ManifestationStatus
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness

REASON = "Serviço não prestado: contrato encerrado em outubro"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfse_harness(tmp_path) as h:
        yield h


def _captured(harness: Harness) -> str:
    key = str(harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT).key)
    harness.run_pending()
    return key


def _posts(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "sefin" and r.operation.startswith("POST"))


@pytest.mark.parametrize(
    ("text", "code"),
    [("confirmacao-tomador", "203202"), ("Rejeição-Tomador", "203206"), ("203206", "203206")],
)
def test_taker_event_names(text: str, code: str) -> None:
    assert event_code(text) == code


def test_confirmation_from_the_command_line(harness: Harness, cli: Cli) -> None:
    key = _captured(harness)
    assert cli("manifest", key, "confirmacao-tomador") == 0, cli.err
    assert "Confirmação do Tomador registrada" in cli.out
    assert _posts(harness) == 1
    assert cli("documents", "show", key) == 0
    assert "203202" in cli.out  # the registered evento, shown with its NFS-e


def test_rejection_with_reason_json_and_the_refusals(harness: Harness, cli: Cli) -> None:
    key = _captured(harness)
    assert cli("manifest", key, "rejeicao-tomador", "--reason", REASON) == 1
    assert "motivo da rejeição" in cli.err
    assert cli("manifest", key, "rejeicao-tomador", "--motivo", "9", "--reason", "curto") == 1
    assert "15 a 255" in cli.err
    assert cli("manifest", key[:-2], "confirmacao-tomador") == 1
    assert "Erro:" in cli.err
    assert _posts(harness) == 0
    result = cli.json("manifest", key, "rejeicao-tomador", "--motivo", "9", "--reason", REASON)
    assert isinstance(result, dict) and result["status"] == "accepted" and result["tp_evento"] == "203206"
    assert cli("manifest", key, "confirmacao-tomador") == 1
    assert "já registrada" in cli.err
    assert _posts(harness) == 1


def test_with_a_running_service_the_taker_request_is_only_queued(harness: Harness, cli: Cli) -> None:
    key = _captured(harness)
    with DataFolderLock(harness.office.data_dir):
        assert cli("manifest", key, "confirmacao-tomador") == 3
    assert "pendente" in cli.out and "serviço de captura em execução" in cli.out
    assert _posts(harness) == 0
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.PENDING
    assert harness.capture.manifestation.dispatch() == 1  # what the running service does next
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFSE, key)
    assert request.status is ManifestationStatus.ACCEPTED


def test_documents_fetch_shows_it_from_the_sefin_then_from_the_database(harness: Harness, cli: Cli) -> None:
    nfse = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)
    assert cli("documents", "fetch", nfse.key) == 0, cli.err
    assert "obtida da Sefin Nacional" in cli.out and nfse.key in cli.out
    result = cli.json("documents", "fetch", nfse.key)
    assert isinstance(result, dict) and result["status"] == "local" and result["document"]["key"] == nfse.key
    assert cli("documents", "fetch", "123") == 1
    assert "Chave de acesso inválida" in cli.err
    gets = [r for r in harness.sandbox.referee.requests if r.service == "sefin"]
    assert len(gets) == 1


def test_documents_list_and_show_give_the_nfse_net_value_where_taxes_are_withheld(harness: Harness, cli: Cli) -> None:
    # Issue 20: the taker pays vLiq where ISS or federal taxes are withheld; vServ alone misleads.
    withheld = harness.sandbox.publish_nfse(
        provider=SUPPLIER, taker=RECIPIENT, service_cents=100_000, retained_cents=15_000
    )
    harness.run_pending()
    assert cli("documents", "list", "--product", "nfse") == 0, cli.err
    header, line = cli.out.splitlines()[0], next(li for li in cli.out.splitlines() if withheld.key in li)
    assert "Valor líquido" in header
    assert "R$ 1.000,00" in line and "R$ 850,00" in line
    listed = cli.json("documents", "list", "--product", "nfse")
    assert isinstance(listed, list)
    row = next(r for r in listed if r["key"] == withheld.key)
    assert (row["total"], row["net"], row["net_cents"]) == ("1000.00", "850.00", 85_000)
    assert cli("documents", "show", withheld.key) == 0, cli.err
    assert "Valor do serviço: R$ 1.000,00   Valor líquido: R$ 850,00" in cli.out
