from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf, mod11_digit
from app.core.keys import AccessKey, DocumentModel, NfseKey, key_problem

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_real_resnfe_key_fields() -> None:
    # From the real 2017 production retDistDFeInt (protocol.md §1.6).
    key = AccessKey("35170307705364000116550010000158771254375877")
    assert key.uf == "SP"
    assert key.year_month == "1703"
    assert key.issuer() == Cnpj("07705364000116")
    assert key.model == DocumentModel.NFE.value
    assert key.serie == 1
    assert key.number == 15877
    assert key.tp_emis == 1
    assert key.code == "25437587"
    assert key.check_digit == 7


def test_keys_of_the_real_procnfe_fixtures() -> None:
    keys = []
    for path in sorted((FIXTURES / "nfe").glob("*procNFe.xml")):
        match = re.search(rb'Id="NFe([0-9A-Z]{44})"', path.read_bytes())
        assert match, path
        keys.append(AccessKey(match.group(1).decode()))
    assert len(keys) >= 3
    assert {k.uf for k in keys} >= {"SC", "PR"}


def test_alphanumeric_cnpj_from_fixture() -> None:
    # BrazilFiscalReport's DANFE fixture for the alphanumeric CNPJ: the emitter is alphanumeric.
    xml = (FIXTURES / "nfe" / "bfr-danfe_cnpj_alfanumerico.xml").read_bytes()
    match = re.search(rb"<emit>\s*<CNPJ>([0-9A-Z]{14})</CNPJ>", xml)
    assert match
    emitter = Cnpj(match.group(1).decode())
    assert emitter.is_alphanumeric


def test_build_round_trip_and_alphanumeric_issuer() -> None:
    key = AccessKey.build(
        uf="SP",
        year_month="2611",
        issuer="12ABC34501DE35",
        model=DocumentModel.NFE,
        serie=1,
        number=123,
        tp_emis=1,
        code=45678901,
    )
    assert AccessKey.parse(f"NFe{key.value}") == key
    assert key.issuer() == Cnpj("12ABC34501DE35")


def test_cpf_issuer_is_left_padded() -> None:
    key = AccessKey.build(
        uf="MG",
        year_month="2610",
        issuer="52998224725",
        model="55",
        serie=920,
        number=1,
        tp_emis=1,
        code=10203040,
    )
    assert key.issuer_id == "00052998224725"
    assert key.issuer() == Cpf("52998224725")


@pytest.mark.parametrize(
    "bad",
    [
        "35170307705364000116550010000158771254375878",  # wrong check digit
        "99170307705364000116550010000158771254375877",  # no such UF
        "3517030770536400011655001000015877125437587",  # 43 chars
        "351703077053640001165500100001587712543758a7",  # letter outside the CNPJ field
    ],
)
def test_invalid_keys(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        AccessKey(bad)


def test_spaced_key_as_printed_on_a_danfe() -> None:
    printed = "3517 0307 7053 6400 0116 5500 1000 0158 7712 5437 5877"
    assert AccessKey.parse(printed).value == "35170307705364000116550010000158771254375877"


@pytest.mark.parametrize(
    ("fixture", "issuer"),
    [
        ("nfse-homolog-2025.xml", Cnpj("31305199000190")),
        ("nfse-prestador-pessoa-fisica.xml", Cpf("06672992383")),
    ],
)
def test_real_nfse_keys(fixture: str, issuer: Cnpj | Cpf) -> None:
    xml = (FIXTURES / "nfse" / fixture).read_bytes()
    match = re.search(rb'Id="NFS([0-9]{50})"', xml)
    assert match
    key = NfseKey(match.group(1).decode())
    assert key.issuer() == issuer
    assert len(key.c_mun) == 7


def test_nfse_key_build_and_check_digit() -> None:
    key = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed="11222333000181", number=42, year_month="2611", code=7)
    assert key.number == 42 and key.tp_insc == 2
    tampered = key.value[:-1] + str((int(key.value[-1]) + 1) % 10)
    with pytest.raises(InvalidIdentifier):
        NfseKey(tampered)


def test_key_problem_says_what_is_wrong_with_a_typed_key() -> None:
    key = AccessKey.build(
        uf="SP", year_month="2401", issuer="11222333000181", model="55", serie=1, number=5, tp_emis=1, code=12345678
    ).value
    assert key_problem(key) is None
    assert key_problem("NFe" + key) is None and key_problem(" ".join(key[i : i + 4] for i in range(0, 44, 4))) is None
    assert key_problem(key[:43]) == "Chave com 43 dígitos: uma chave de NF-e ou CT-e tem 44."
    wrong = (int(key[43]) + 3) % 10
    assert key_problem(key[:43] + str(wrong)) == (
        f"Dígito verificador da chave não confere: esperado {key[43]}, informado {wrong}."
    )
    assert key_problem(key + "12") == "Chave com 46 dígitos: uma chave de NF-e ou CT-e tem 44, uma de NFS-e tem 50."
    assert key_problem(key + "1234567") == "Chave com 51 dígitos: uma chave de NFS-e tem 50."
    assert key_problem(key[:20] + "?" + key[21:]) is not None
    nfse = NfseKey.build(
        c_mun="3550308", amb_ger=1, insc_fed="11222333000181", number=7, year_month="2401", code=1
    ).value
    assert key_problem(nfse) is None
    bad = (int(nfse[49]) + 1) % 10
    assert key_problem(nfse[:49] + str(bad)) == (
        f"Dígito verificador da chave não confere: esperado {nfse[49]}, informado {bad}."
    )
    # Valid digits, impossible content: the key's own rule says which.
    impossible = "99" + key[2:43]
    assert "UF inexistente" in (key_problem(impossible + str(mod11_digit(impossible))) or "")
