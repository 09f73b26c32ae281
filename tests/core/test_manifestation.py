from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.manifestation import (
    CIENCIA,
    CONFIRMACAO,
    DESCONHECIMENTO,
    MANIFESTATION_TYPES,
    MAX_EVENT_SENDS,
    NAO_REALIZADA,
    EventOutcome,
    InvalidManifestation,
    ciencia_due,
    ciencia_due_at,
    classify_event_result,
    deadline,
    event_id,
    event_retry_delay,
    manifestation_type,
    next_seq,
    should_send_auto_ciencia,
    validate_justification,
    within_deadline,
)

KEY = "29161211351930000106550010000000151000000151"
T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)


def test_exact_desc_evento_and_ui_labels() -> None:
    assert {t: m.desc_evento for t, m in MANIFESTATION_TYPES.items()} == {
        "210200": "Confirmacao da Operacao",
        "210210": "Ciencia da Operacao",
        "210220": "Desconhecimento da Operacao",
        "210240": "Operacao nao Realizada",
    }
    assert manifestation_type(CIENCIA).label == "Ciência da Operação"
    assert manifestation_type(NAO_REALIZADA).label == "Operação não Realizada"
    with pytest.raises(InvalidManifestation):
        manifestation_type("110111")


def test_justification_rules() -> None:
    with pytest.raises(InvalidManifestation, match="exige justificativa"):
        validate_justification(NAO_REALIZADA, None)
    with pytest.raises(InvalidManifestation, match="15 a 255"):
        validate_justification(NAO_REALIZADA, "curta demais")
    with pytest.raises(InvalidManifestation, match="15 a 255"):
        validate_justification(NAO_REALIZADA, "x" * 256)
    with pytest.raises(InvalidManifestation, match="não permitidos"):
        validate_justification(NAO_REALIZADA, "Operação cancelada \u2014 devolvida")
    # A line break typed in a dialog becomes a space (the layout has none).
    assert validate_justification(NAO_REALIZADA, "mercadoria não\nfoi entregue") == "mercadoria não foi entregue"
    assert validate_justification(NAO_REALIZADA, "  Mercadoria devolvida ao emitente.  ") == (
        "Mercadoria devolvida ao emitente."
    )
    assert validate_justification(DESCONHECIMENTO, "") is None
    assert validate_justification(DESCONHECIMENTO, "Operação desconhecida pela empresa") is not None
    with pytest.raises(InvalidManifestation, match="não aceita"):
        validate_justification(CONFIRMACAO, "Confirmo o recebimento da mercadoria")


def test_deadlines_from_authorisation() -> None:
    assert deadline(CIENCIA, T0) == T0 + timedelta(days=10)
    assert deadline(CONFIRMACAO, T0) == T0 + timedelta(days=90)
    assert within_deadline(NAO_REALIZADA, T0, T0 + timedelta(days=90))
    assert not within_deadline(CIENCIA, T0, T0 + timedelta(days=10, seconds=1))


def test_sequence_and_the_one_rectification() -> None:
    assert next_seq(CONFIRMACAO, []) == 1
    assert next_seq(CONFIRMACAO, [1]) == 2
    with pytest.raises(InvalidManifestation, match="retificada"):
        next_seq(CONFIRMACAO, [1, 2])
    assert next_seq(CIENCIA, []) == 1
    with pytest.raises(InvalidManifestation, match="já foi registrada"):
        next_seq(CIENCIA, [1])


def test_event_id_layout() -> None:
    assert event_id(CIENCIA, KEY, 1) == "ID210210" + KEY + "01"
    assert len(event_id(CONFIRMACAO, KEY, 2)) == 54 and event_id(CONFIRMACAO, KEY, 2).endswith("02")
    with pytest.raises(InvalidManifestation):
        event_id(CIENCIA, KEY[:-1], 1)


def test_ciencia_due_after_the_wait_never_under_five_minutes() -> None:
    assert ciencia_due_at(T0, 30) == T0 + timedelta(minutes=30)
    assert ciencia_due_at(T0, 1) == T0 + timedelta(minutes=5)
    assert not ciencia_due(T0, 10, T0 + timedelta(minutes=9, seconds=59))
    assert ciencia_due(T0, 10, T0 + timedelta(minutes=10))


def test_auto_ciencia_checked_again_before_sending() -> None:
    assert should_send_auto_ciencia(True, [], False)
    off = should_send_auto_ciencia(False, [], False)
    assert not off and "desligada" in off.reason
    assert not should_send_auto_ciencia(True, [CONFIRMACAO], False)
    # only accepted events are passed: a pending conclusive one does not cancel the Ciência
    assert should_send_auto_ciencia(True, [], False).send
    assert not should_send_auto_ciencia(True, [CIENCIA], False)
    assert not should_send_auto_ciencia(True, [], True)  # at most one per key
    assert not should_send_auto_ciencia(True, [], False, own_document=True)


def test_result_classification() -> None:
    assert classify_event_result(135, "Evento registrado e vinculado a NF-e").outcome is EventOutcome.ACCEPTED
    assert classify_event_result(136).success
    done = classify_event_result(573, "Rejeicao: Duplicidade de evento")
    assert done.outcome is EventOutcome.ALREADY_DONE and done.success
    rejected = classify_event_result(596, "Rejeicao: Evento apresentado apos o prazo", lot_cstat=128)
    assert rejected.outcome is EventOutcome.REJECTED and "596" in rejected.reason and "prazo" in rejected.reason
    assert classify_event_result(None, lot_cstat=128).outcome is EventOutcome.RETRY  # lot-level only
    assert classify_event_result(128, lot_cstat=128).outcome is EventOutcome.RETRY
    assert classify_event_result(None, lot_cstat=108).outcome is EventOutcome.RETRY
    lot = classify_event_result(None, "Rejeicao: Falha no Schema XML", lot_cstat=215)
    assert lot.outcome is EventOutcome.REJECTED and lot.cstat == 215
    assert classify_event_result(None).outcome is EventOutcome.RETRY  # communication failure


def test_event_send_retries_are_bounded() -> None:
    assert [event_retry_delay(n) for n in (1, 2, 6, 7)] == [
        timedelta(minutes=1),
        timedelta(minutes=2),
        timedelta(minutes=30),
        timedelta(minutes=30),
    ]
    assert event_retry_delay(MAX_EVENT_SENDS) is None
