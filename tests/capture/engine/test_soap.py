"""``soap_lot``: one distNSU to the sandbox over mutual TLS and the engine's answer it becomes."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from app.capture.engine.adapter import LotAnswer
from app.capture.engine.soap import may_have_reached_service, soap_lot
from app.capture.nfe.adapter import NfeAdapter
from app.core.cadence import CaptureState, rules_for
from app.core.products import Product
from app.fiscal.errors import ConnectionFailed, HttpStatusError, ServiceTimeout, TlsRefused
from app.store.records import CallOutcome, CaptureSettings
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness

PRODUCT = Product.NFE


def _settings(harness: Harness) -> CaptureSettings:
    settings = harness.office.companies.get_settings(harness.company.id, PRODUCT)
    assert settings is not None
    return settings


def _lot(harness: Harness, state: CaptureState | None = None, settings: CaptureSettings | None = None) -> LotAnswer:
    return soap_lot(
        harness.ctx,
        NfeAdapter(harness.ctx),
        rules_for(PRODUCT),
        harness.company,
        settings or _settings(harness),
        state or harness.ctx.cursors.get(harness.company.id, PRODUCT),
    )


def _asked(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_dist")


def test_a_lot_with_documents_advances_the_cursor_and_keeps_the_exchange(harness: Harness) -> None:
    for _ in range(3):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    answer = _lot(harness)
    assert (answer.outcome, answer.code, answer.http_status) == (CallOutcome.OK, "138", 200)
    assert [item.nsu for item in answer.items] == [1, 2, 3] and answer.corrupt == ()
    assert answer.transition.state.ult_nsu == answer.transition.state.max_nsu == 3
    assert answer.exchange is not None and b"distNSU" in answer.exchange[0] and b"138" in answer.exchange[1]
    assert harness.ctx.cursors.get(harness.company.id, PRODUCT).ult_nsu == 0  # storing is the engine's


def test_an_empty_queue_is_a_137_and_the_hour_after_it(harness: Harness) -> None:
    answer = _lot(harness)
    rules = rules_for(PRODUCT)
    assert (answer.outcome, answer.code, answer.items) == (CallOutcome.OK, "137", [])
    waits_until = answer.transition.state.next_query_at
    assert waits_until is not None
    assert waits_until >= harness.clock.now() + rules.empty_queue_wait
    assert not answer.transition.chain_immediately


def test_a_corrupt_doczip_is_named_for_a_point_query_and_kept(harness: Harness) -> None:
    for _ in range(2):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.inject_fault("nfe_dist", "corrupt_gzip", cnpj=RECIPIENT)
    answer = _lot(harness)
    [bad] = answer.corrupt
    [item] = [i for i in answer.items if i.nsu == bad]
    assert getattr(item, "parse_error", None)  # quarantined with its reason
    assert answer.transition.state.ult_nsu == 2  # the cursor passes it: the bytes are kept


def test_a_failed_call_leaves_the_cursor_and_says_why(harness: Harness) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.inject_fault("nfe_dist", "http_503", cnpj=RECIPIENT)
    answer = _lot(harness)
    assert answer.outcome is CallOutcome.HTTP_ERROR and answer.code is None and not answer.items
    assert answer.error and "503" in answer.error
    assert answer.exchange is None
    assert answer.transition.state.ult_nsu == 0
    assert answer.transition.state.next_query_at is not None  # the retry waits


def test_a_request_our_side_got_wrong_is_never_sent_and_stops_the_company(harness: Harness) -> None:
    wrong = replace(_settings(harness), c_uf_autor="ZZ")
    answer = _lot(harness, settings=wrong)
    assert answer.outcome is CallOutcome.REJECTED
    assert answer.transition.state.disabled_reason == answer.error and "cUFAutor" in (answer.error or "")
    assert _asked(harness) == 0


def _caused(error: ConnectionFailed, cause: Exception) -> ConnectionFailed:
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("error", "reached"),
    [
        (TlsRefused("Certificado recusado."), False),
        (_caused(ConnectionFailed("Sem conexão."), httpx.ConnectError("refused")), False),
        (_caused(ConnectionFailed("Conexão encerrada."), httpx.ReadError("reset")), True),
        (_caused(ConnectionFailed("Conexão encerrada."), httpx.RemoteProtocolError("closed")), True),
        (ConnectionFailed("Sem detalhe."), False),
        (ServiceTimeout("Tempo esgotado."), True),
        (HttpStatusError(502), True),
    ],
)
def test_whether_a_lost_answer_may_have_been_processed(error: Exception, reached: bool) -> None:
    assert may_have_reached_service(error) is reached  # type: ignore[arg-type]
