from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf, cnpj_check_digits, cpf_check_digits, mod11_digit, parse_taxpayer


def test_official_alphanumeric_vector() -> None:
    # RFB's own example for the alphanumeric CNPJ (NT COCAD/SUARA/RFB 49/2024).
    assert cnpj_check_digits("12ABC34501DE") == "35"
    cnpj = Cnpj.parse("12.ABC.345/01DE-35")
    assert cnpj.value == "12ABC34501DE35"
    assert cnpj.base == "12ABC345"
    assert cnpj.is_alphanumeric
    assert cnpj.formatted() == "12.ABC.345/01DE-35"


def test_lower_case_is_normalised_to_what_the_schemas_accept() -> None:
    assert Cnpj.parse("12abc34501de35").value == "12ABC34501DE35"


@pytest.mark.parametrize(
    "cnpj",
    [
        "11222333000181",
        "07705364000116",  # emitter of a real 2017 resNFe (protocol.md §1.6)
        "75277525000178",  # emitter of real procNFe fixtures
    ],
)
def test_real_numeric_cnpjs(cnpj: str) -> None:
    parsed = Cnpj(cnpj)
    assert not parsed.is_alphanumeric
    assert Cnpj.from_body(cnpj[:12]) == parsed


@pytest.mark.parametrize(
    "bad",
    ["11222333000182", "12ABC34501DE36", "00000000000000", "AAAAAAAAAAAA00", "1122233300018", "12abc34501de35"],
)
def test_invalid_cnpjs_are_refused(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        Cnpj(bad)


def test_cpf() -> None:
    assert cpf_check_digits("529982247") == "25"
    assert Cpf.parse("529.982.247-25").formatted() == "529.982.247-25"
    for bad in ["52998224724", "11111111111", "5299822472"]:
        with pytest.raises(InvalidIdentifier):
            Cpf(bad)


def test_parse_taxpayer_tells_cpf_from_cnpj() -> None:
    assert isinstance(parse_taxpayer("529.982.247-25"), Cpf)
    assert isinstance(parse_taxpayer("11.222.333/0001-81"), Cnpj)


def test_error_message_is_portuguese_and_formatted() -> None:
    with pytest.raises(InvalidIdentifier, match=r"dígito verificador inválido: 11\.222\.333/0001-82"):
        Cnpj("11222333000182")


def _reference_mod11(body: str, max_weight: int) -> int:
    # The rule as the technical notes state it, one character at a time.
    total, weight = 0, 2
    for c in reversed(body):
        total += (ord(c) - 48) * weight
        weight = 2 if weight == max_weight else weight + 1
    dv = 11 - total % 11
    return 0 if dv > 9 else dv


@given(
    body=st.text(alphabet="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=50),
    max_weight=st.sampled_from([9, 10, 11, 60]),
)
def test_fast_mod11_equals_the_rule(body: str, max_weight: int) -> None:
    assert mod11_digit(body, max_weight) == _reference_mod11(body, max_weight)
