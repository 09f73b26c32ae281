"""The search field tells a key, a CNPJ, a number and a name apart, and says what is wrong with a key."""

from __future__ import annotations

from app.core.keys import AccessKey
from app.desk.search import Search, parse_search

KEY = AccessKey.build(
    uf="SP", year_month="2401", issuer="11222333000181", model="55", serie=1, number=5, tp_emis=1, code=12345678
).value


def test_a_valid_key_a_cnpj_a_number_and_a_name() -> None:
    assert parse_search(" ".join(KEY[i : i + 4] for i in range(0, 44, 4))) == Search(access_key=KEY)
    assert parse_search("11.222.333/0001-81") == Search(counterpart_id="11222333000181")
    assert parse_search("000123") == Search(number=123)
    assert parse_search("Padaria") == Search(text="Padaria")
    # "²" and other scripts' digits pass str.isdigit but are no number: searched as text, no crash.
    assert parse_search("12\u00b2") == Search(text="12\u00b2")
    assert parse_search("\u0661\u0662") == Search(text="\u0661\u0662")


def test_a_mistyped_key_is_searched_as_typed_and_says_why_it_finds_nothing() -> None:
    short = parse_search(KEY[:43])
    assert short.access_key == KEY[:43]
    assert short.key_problem == "Chave com 43 dígitos: uma chave de NF-e ou CT-e tem 44."
    wrong = str((int(KEY[43]) + 1) % 10)
    typed = parse_search(KEY[:43] + wrong)
    assert typed.access_key == KEY[:43] + wrong
    assert typed.key_problem == f"Dígito verificador da chave não confere: esperado {KEY[43]}, informado {wrong}."
    assert parse_search(KEY).key_problem is None
