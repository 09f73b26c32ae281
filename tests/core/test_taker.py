"""NFS-e taker rules: the two events, the rejection reason, the refusals and how Sefin's answer ends a request."""

from __future__ import annotations

import pytest

from app.core.manifestation import InvalidManifestation
from app.core.taker import (
    CONFIRMACAO_TOMADOR,
    REJEICAO_TOMADOR,
    RejectionReason,
    SefinOutcome,
    judge_event_answer,
    ped_reg_id,
    read_reason,
    refusal,
    stored_reason,
    validate_reason,
)

TAKER = "11222333000181"
PROVIDER = "99888777000100"
KEY = "35503082299888777000100000000000000126110000000018"
TEXT = "Serviço não prestado nesta competência"


def test_a_rejection_needs_a_known_code_and_15_to_255_characters() -> None:
    assert validate_reason(REJEICAO_TOMADOR, 9, f"  {TEXT}\n") == RejectionReason("9", TEXT)
    with pytest.raises(InvalidManifestation, match="Informe o motivo"):
        validate_reason(REJEICAO_TOMADOR, "6", TEXT)
    with pytest.raises(InvalidManifestation, match="exige a descrição"):
        validate_reason(REJEICAO_TOMADOR, "1", " ")
    with pytest.raises(InvalidManifestation, match="tem 256"):
        validate_reason(REJEICAO_TOMADOR, "1", "x" * 256)
    assert validate_reason(CONFIRMACAO_TOMADOR, None, None) is None
    with pytest.raises(InvalidManifestation, match="não aceita motivo"):
        validate_reason(CONFIRMACAO_TOMADOR, "1", None)


def test_the_reason_survives_the_one_justification_column() -> None:
    reason = RejectionReason("5", TEXT)
    assert read_reason(stored_reason(reason)) == reason
    assert stored_reason(None) is None and read_reason(None) is None and read_reason("x y") is None
    assert reason.label.startswith("5 - Erro quanto ao valor")


def test_the_pedido_id_is_pre_key_code() -> None:
    assert ped_reg_id(KEY, REJEICAO_TOMADOR) == f"PRE{KEY}203206"
    alnum = KEY[:9] + "12ABC34501DE35" + KEY[23:]
    assert ped_reg_id(alnum, CONFIRMACAO_TOMADOR).startswith("PRE355030822")  # lenient key check
    with pytest.raises(InvalidManifestation):
        ped_reg_id(KEY[:-1], CONFIRMACAO_TOMADOR)


@pytest.mark.parametrize(
    ("emitter", "taker", "certificate", "expected"),
    [
        (TAKER, PROVIDER, TAKER, "própria empresa"),
        (TAKER, TAKER, TAKER, "própria empresa"),  # provider and taker at once: still its own
        (PROVIDER, None, TAKER, "não informa o tomador"),
        (PROVIDER, "44555666000181", TAKER, "não é a tomadora"),
        (PROVIDER, TAKER, "11222333000262", "não do tomador"),
        (PROVIDER, TAKER, TAKER, None),
    ],
)
def test_who_may_manifest(emitter: str, taker: str | None, certificate: str, expected: str | None) -> None:
    found = refusal(TAKER, certificate, emitter, taker)
    assert (found is None) if expected is None else (found is not None and expected in found)


def test_how_sefins_answer_ends_the_request() -> None:
    assert judge_event_answer(201, None, "").outcome is SefinOutcome.ACCEPTED
    twice = judge_event_answer(400, "E1833", "Já existe uma manifestação")
    assert twice.outcome is SefinOutcome.REJECTED and twice.code == "E1833" and "já existe" in twice.reason
    bare = judge_event_answer(401, None, "")
    assert bare.code == "HTTP401" and "sem descrição" in bare.reason
    assert judge_event_answer(503, None, "").outcome is SefinOutcome.RETRY
    assert judge_event_answer(429, None, "").outcome is SefinOutcome.RETRY
