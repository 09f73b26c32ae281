"""One manifestation (issue 20): a registered conclusive NF-e event is never sent again by a plain
request, through the desk (as the window sends) and through the command line; the one
rectification is its own, deliberate request; a request pending is not sent twice."""

from __future__ import annotations

import pytest

from app.capture.instance import DataFolderLock
from app.core.manifestation import CONFIRMACAO, DESCONHECIMENTO, NAO_REALIZADA
from app.core.products import Product
from app.desk import Desk
from app.desk.views import GridRow
from app.store.records import ManifestationStatus
from tests.cli.conftest import Cli
from tests.desk.conftest import Office

REASON = "Mercadoria devolvida ao fornecedor"


@pytest.fixture
def cli_on_office(office: Office, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(office.harness, capsys)


def _sent(office: Office) -> list[str]:
    return [r.service for r in office.harness.sandbox.referee.requests if r.service == "nfe_evento"]


def _row(desk: Desk, key: str) -> GridRow:
    [row] = [r for r in desk.find_key(key) if not r.is_event_row]
    return row


def test_a_second_confirmation_from_the_window_is_refused_and_the_buttons_offer_the_rectification(
    office: Office, desk: Desk
) -> None:
    key = office.received[1]
    row = _row(desk, key)
    assert set(desk.manifestation_actions(row).allowed) >= {CONFIRMACAO, DESCONHECIMENTO, NAO_REALIZADA}

    first = desk.request_manifestation(row.company_id, key, CONFIRMACAO)
    assert first.accepted, first.message
    again = desk.request_manifestation(row.company_id, key, CONFIRMACAO)
    assert again.refused and not again.accepted
    assert again.message.startswith("A Confirmação da Operação já foi registrada em ")
    assert f"(protocolo {first.protocol})" in again.message and "retificação" in again.message
    other = desk.request_manifestation(row.company_id, key, DESCONHECIMENTO)
    assert other.refused and "já foi registrada" in other.message
    assert len(_sent(office)) == 1  # the service received exactly one

    detail = desk.detail(desk.row(row))
    assert not {CONFIRMACAO, DESCONHECIMENTO, NAO_REALIZADA} & set(detail.allowed_manifestations)
    assert set(detail.rectifiable_manifestations) == {CONFIRMACAO, DESCONHECIMENTO, NAO_REALIZADA}

    fixed = desk.manifest(row.company_id, key, NAO_REALIZADA, justification=REASON, rectify=True)
    assert fixed.accepted, fixed.message
    assert len(_sent(office)) == 2
    twice = desk.manifest(row.company_id, key, DESCONHECIMENTO, rectify=True)
    assert twice.refused and "não há nova retificação permitida" in twice.message
    assert desk.manifestation_actions(desk.row(row)).rectifiable == ()
    assert len(_sent(office)) == 2


def test_a_rectification_needs_a_registered_conclusive_event(office: Office, desk: Desk) -> None:
    row = _row(desk, office.received[2])
    outcome = desk.manifest(row.company_id, office.received[2], CONFIRMACAO, rectify=True)
    assert outcome.refused and "Não há manifestação conclusiva registrada para retificar" in outcome.message
    assert _sent(office) == []


def test_a_pending_request_is_not_sent_twice_nor_joined_by_another_conclusive(office: Office, desk: Desk) -> None:
    key = office.received[1]
    row = _row(desk, key)
    with DataFolderLock(office.harness.office.data_dir):  # another instance captures: it sends
        first = desk.request_manifestation(row.company_id, key, CONFIRMACAO)
        again = desk.request_manifestation(row.company_id, key, CONFIRMACAO)
        other = desk.request_manifestation(row.company_id, key, DESCONHECIMENTO)
    assert first.pending and first.queued_elsewhere and again.pending
    assert again.request is not None and first.request is not None and again.request.id == first.request.id
    assert other.refused and "Já há uma Confirmação da Operação pendente" in other.message
    stored = office.harness.ctx.manifestations.for_key(row.company_id, Product.NFE, key)
    assert [m.status for m in stored] == [ManifestationStatus.PENDING]
    assert desk.manifestation_actions(desk.row(row)).allowed == ()  # nothing else while it is in flight
    assert _sent(office) == []


def test_the_command_line_is_held_by_the_same_guard(office: Office, cli_on_office: Cli) -> None:
    cli = cli_on_office
    key = office.received[1]
    assert cli("manifest", key, "confirmacao") == 0, cli.err
    assert cli("manifest", key, "confirmacao") == 1
    assert (
        "A Confirmação da Operação já foi registrada em" in cli.err
        and f"manifest {key} confirmacao --retificar" in cli.err
    )
    assert cli("manifest", key, "desconhecimento") == 1
    assert len(_sent(office)) == 1  # the sandbox received exactly one
    assert cli("manifest", key, "nao-realizada", "--reason", REASON, "--retificar") == 0, cli.err
    assert "Operação não Realizada registrada" in cli.out
    assert cli("manifest", key, "confirmacao", "--retificar") == 1
    assert "não há nova retificação permitida" in cli.err
    assert len(_sent(office)) == 2
