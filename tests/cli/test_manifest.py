from __future__ import annotations

from datetime import timedelta

import pytest

from app.capture.instance import DataFolderLock
from app.cli.manifest import event_code
from app.core.errors import CapturaError
from app.core.products import Product
from app.store.records import DocumentKind, ManifestationStatus
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _captured_key(harness: Harness) -> str:
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    harness.run_pending()
    return key


def _event_requests(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_evento")


def test_ciencia_is_sent_once_and_releases_the_full_nfe(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    assert cli("manifest", key, "ciencia") == 0
    assert "Ciência da Operação registrada: protocolo" in cli.out
    assert _event_requests(harness) == 1
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert request.status is ManifestationStatus.ACCEPTED and request.cstat == "135"

    harness.run_until(harness.clock.now() + timedelta(hours=1, minutes=5))
    summary = harness.ctx.documents.find(harness.company.id, Product.NFE, key)
    assert summary is not None and summary.kind is DocumentKind.NFE_PROC
    assert harness.sandbox.referee.report()["violations"] == []


def test_json_result_and_a_second_ciencia_is_refused(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    result = cli.json("manifest", key, "210210", "--company", RECIPIENT)
    assert isinstance(result, dict)
    assert result["status"] == "accepted" and result["protocol"] and result["tp_evento"] == "210210"
    assert result["attempts"] == ""  # registered: the NT 2018.002 count no longer matters
    assert cli("manifest", key, "ciencia") == 1
    assert "já registrada" in cli.err
    assert _event_requests(harness) == 1


def test_refusals_exit_1_with_the_reason(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    assert cli("manifest", key, "nao-realizada") == 1
    assert "exige justificativa" in cli.err
    assert cli("manifest", key, "210999") == 2  # misuse of the command line, not a refusal
    assert "Evento desconhecido: '210999'" in cli.err
    assert cli("manifest", "123", "ciencia") == 1
    assert "Erro:" in cli.err
    other = "35261199888777000100550010000000011000000010"
    assert cli("manifest", other, "ciencia") == 1
    assert "--company" in cli.err
    assert _event_requests(harness) == 0


def test_operation_not_performed_with_reason_is_registered(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    assert cli("manifest", key, "nao-realizada", "--reason", "Mercadoria devolvida ao fornecedor") == 0
    assert "Operação não Realizada registrada" in cli.out


def test_with_a_running_service_the_request_is_only_queued(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    with DataFolderLock(harness.office.data_dir):
        assert cli("manifest", key, "confirmacao") == 3
    assert "pendente" in cli.out and "serviço de captura em execução" in cli.out
    assert _event_requests(harness) == 0
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert request.status is ManifestationStatus.PENDING
    harness.capture.manifestation.dispatch()  # what the running service does next
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert request.status is ManifestationStatus.ACCEPTED


def test_communication_failure_leaves_it_pending(harness: Harness, cli: Cli) -> None:
    key = _captured_key(harness)
    harness.sandbox.inject_fault("nfe_evento", "http_503")
    assert cli("manifest", key, "ciencia") == 3
    assert "pendente" in cli.out
    [request] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert request.status is ManifestationStatus.PENDING and request.not_before > harness.clock.now()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("confirmacao", "210200"),
        ("Ciência", "210210"),
        ("desconhecimento", "210220"),
        ("nao-realizada", "210240"),
        ("210240", "210240"),
    ],
)
def test_event_names(text: str, code: str) -> None:
    assert event_code(text) == code


def test_unknown_event_name() -> None:
    with pytest.raises(CapturaError, match="desconhecido"):
        event_code("aceite")


def test_a_request_the_vault_cannot_sign_is_refused_and_not_recorded(
    harness: Harness, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring

    key = _captured_key(harness)
    monkeypatch.setattr(keyring, "get_password", lambda *_a: None)  # as on a machine without its vault
    assert cli("manifest", key, "confirmacao") == 1
    assert "não enviada" in cli.err and "rejeitada" not in cli.err
    assert harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key) == []
    assert _event_requests(harness) == 0
