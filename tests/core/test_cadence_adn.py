from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.cadence import NFSE_RULES, SAFETY_MARGIN, Action, CaptureState, CommunicationFailure, decide
from app.core.cadence_adn import AdnCertificateRejected, AdnResult, AdnStatus, AdnThrottled, apply_adn
from app.core.products import Product

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília


def _state(ult: int = 0, failures: int = 0) -> CaptureState:
    return CaptureState(3, Product.NFSE, ult_nsu=ult, max_nsu=ult, consecutive_failures=failures)


def _action(state: CaptureState, now: datetime) -> Action:
    return decide(state, NFSE_RULES, now, global_pause_until=None, certificate_problem=None, enabled=True).action


def test_documents_chain_with_a_one_second_spacing_up_to_50_lots() -> None:
    t = apply_adn(_state(10), NFSE_RULES, T0, AdnResult(AdnStatus.DOCUMENTS, (11, 12, 14), lots_in_run=3))
    assert t.chain_immediately and t.state.ult_nsu == 14 and t.state.consecutive_failures == 0
    assert _action(t.state, T0) is Action.WAIT
    assert _action(t.state, T0 + timedelta(seconds=1)) is Action.QUERY
    last = apply_adn(_state(10), NFSE_RULES, T0, AdnResult(AdnStatus.DOCUMENTS, (11,), lots_in_run=50))
    assert not last.chain_immediately and last.state.wait_reason == "Continua no próximo ciclo."


def test_no_documents_waits_one_hour_plus_margin() -> None:
    t = apply_adn(_state(40), NFSE_RULES, T0, AdnResult(AdnStatus.NO_DOCUMENTS, message="Nenhum documento localizado"))
    assert t.state.next_query_at == T0 + timedelta(hours=1) + SAFETY_MARGIN and t.state.ult_nsu == 40
    assert t.state.last_cstat == "NENHUM_DOC"  # fits the 10-character column
    assert _action(t.state, T0 + timedelta(minutes=59)) is Action.WAIT


def test_rejection_waits_10_minutes_only_when_the_run_captured_nothing() -> None:
    nothing = AdnResult(AdnStatus.REJECTED, message="NSU inválido", error_codes=("E2201",))
    t = apply_adn(_state(5), NFSE_RULES, T0, nothing)
    assert t.state.next_query_at == T0 + timedelta(minutes=10) and t.state.last_cstat == "E2201"
    assert t.state.wait_reason == "O ADN da NFS-e rejeitou a consulta (E2201: NSU inválido); nova tentativa às 10:10."
    some = AdnResult(AdnStatus.REJECTED, error_codes=("E2201",), captured_in_run=True)
    assert apply_adn(_state(5), NFSE_RULES, T0, some).state.next_query_at == T0 + timedelta(seconds=30)


def test_429_honours_retry_after_or_one_hour() -> None:
    t = apply_adn(_state(), NFSE_RULES, T0, AdnThrottled(timedelta(seconds=120)))
    assert t.state.blocked_until == T0 + timedelta(seconds=121)
    assert _action(t.state, T0 + timedelta(seconds=120)) is Action.BLOCKED
    assert apply_adn(_state(), NFSE_RULES, T0, AdnThrottled()).state.blocked_until == T0 + timedelta(hours=1)


def test_transient_failures_back_off_exponentially_up_to_an_hour_and_never_disable() -> None:
    state = _state()
    now = T0
    waits = []
    for _ in range(9):
        state = apply_adn(state, NFSE_RULES, now, CommunicationFailure("HTTP 503", False)).state
        assert state.next_query_at is not None and state.disabled_reason is None
        waits.append(state.next_query_at - now)
        now = state.next_query_at
    assert waits == [timedelta(minutes=m) for m in (1, 2, 4, 8, 16, 32, 60, 60, 60)]


def test_a_lost_answer_waits_the_hour_an_empty_queue_would_ask() -> None:
    state = apply_adn(_state(), NFSE_RULES, T0, CommunicationFailure("tempo esgotado", True)).state
    assert state.next_query_at == T0 + timedelta(hours=1) + SAFETY_MARGIN
    assert state.consecutive_failures == 1 and "se perdeu" in (state.wait_reason or "")


def test_ten_certificate_rejections_disable_the_capture() -> None:
    state = _state(failures=8)
    t = apply_adn(state, NFSE_RULES, T0, AdnCertificateRejected("HTTP 403"))
    assert t.state.disabled_reason is None and "9 de 10" in (t.state.wait_reason or "")
    t = apply_adn(t.state, NFSE_RULES, T0, AdnCertificateRejected("HTTP 403"))
    assert t.state.disabled_reason is not None and "10 vezes" in t.state.disabled_reason and t.alert
    assert _action(t.state, T0 + timedelta(days=2)) is Action.DISABLED


def test_an_unusable_certificate_is_a_one_hour_wait_with_the_company_kept_active() -> None:
    decision = decide(
        _state(), NFSE_RULES, T0, global_pause_until=None, certificate_problem="Certificado vencido.", enabled=True
    )
    assert decision.action is Action.WAIT and decision.until == T0 + timedelta(hours=1)
    assert "Certificado indisponível" in decision.reason
