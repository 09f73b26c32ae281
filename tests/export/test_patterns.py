"""Patterns: tokens, the default archive names, Windows-safe segments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.export.patterns import (
    DEFAULT_PATTERN,
    MAX_RELATIVE,
    MAX_SEGMENT,
    NameFacts,
    PatternError,
    render,
    safe_segment,
    validate_pattern,
)

KEY = "35261199888777000100550010000001231000001234"
BRT = timezone(timedelta(hours=-3))


def facts(**changes: object) -> NameFacts:
    base = dict(
        cnpj="11222333000181",
        empresa="DESTINATARIA EXEMPLO LTDA",
        produto="NFe",
        tipo="NFe",
        chave=KEY,
        when=datetime(2026, 11, 2, 9, 30, tzinfo=BRT),
        nsu=42,
        emitente_cnpj="99888777000100",
        numero=123,
        layout="nfeProc",
    )
    base.update(changes)
    return NameFacts(**base)  # type: ignore[arg-type]


def test_the_default_pattern_names_a_complete_nfe_by_key_with_its_layout() -> None:
    assert render(DEFAULT_PATTERN, facts()) == f"11222333000181/2026-11/NFe/{KEY}-procNFe.xml"


def test_a_resumo_goes_to_resumos_under_its_plain_key() -> None:
    path = render(DEFAULT_PATTERN, facts(tipo="Resumos", layout="resNFe"))
    assert path == f"11222333000181/2026-11/Resumos/{KEY}.xml"


def test_events_carry_type_and_sequence_whatever_the_pattern() -> None:
    event = facts(tipo="Eventos", layout="procEventoNFe", tp_evento="110111", seq=1)
    assert render(DEFAULT_PATTERN, event) == f"11222333000181/2026-11/Eventos/{KEY}-110111-1.xml"
    assert render("{numero}-{chave}.xml", event) == f"123-{KEY}-110111-1.xml"
    assert render("{numero}-{chave}.xml", facts()) == f"123-{KEY}.xml"


def test_every_token_is_filled() -> None:
    pattern = "{produto}/{empresa}/{ano}{mes}{dia}/{direcao}/{emitente_cnpj}-{serie}-{numero}-{nsu}-{chave}.xml"
    path = render(pattern, facts(serie=1))
    assert path == f"NFe/DESTINATARIA EXEMPLO LTDA/20261102/Recebidas/99888777000100-1-123-42-{KEY}.xml"


def test_the_issue_date_keeps_its_own_offset() -> None:
    late = datetime(2026, 11, 30, 23, 30, tzinfo=BRT)  # 02:30 UTC on December 1st
    assert render("{ano}-{mes}-{dia}/{chave}.xml", facts(when=late, layout="resNFe")).startswith("2026-11-30/")
    assert late.astimezone(UTC).day == 1


def test_a_company_name_cannot_make_folders_or_forbidden_names() -> None:
    path = render("{empresa}/{chave}.xml", facts(empresa='ACME / FILIAL: "SUL" <1>?*', layout="resNFe"))
    folder = path.split("/")[0]
    assert path.count("/") == 1
    assert not set('<>:"\\|?*') & set(folder)


@pytest.mark.parametrize("name", ["CON", "nul", "COM1", "lpt9", "aux.xml", "PRN.txt"])
def test_reserved_windows_names_are_changed(name: str) -> None:
    assert safe_segment(name).startswith("_")


def test_trailing_dots_and_spaces_go_and_long_names_are_cut() -> None:
    assert safe_segment("EMPRESA LTDA. ") == "EMPRESA LTDA"
    long = safe_segment("X" * 300 + ".xml")
    assert len(long) == MAX_SEGMENT and long.endswith(".xml")


def test_a_whole_path_stays_within_its_budget_and_keeps_the_file_name() -> None:
    path = render("{empresa}/{empresa}/{empresa}/{chave}.xml", facts(empresa="E" * 110, layout="resNFe"))
    assert len(path) <= MAX_RELATIVE
    assert path.endswith(f"/{KEY}.xml")


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("{cnpj}/{foo}.xml", "Campo desconhecido"),
        ("/tmp/{chave}.xml", "relativo"),
        ("C:\\x\\{chave}.xml", "relativo"),
        ("../{chave}.xml", "subir"),
        ("{cnpj}.xml", "{chave}"),
        ("  ", "vazio"),
    ],
)
def test_bad_patterns_are_refused_in_portuguese(pattern: str, words: str) -> None:
    with pytest.raises(PatternError, match=words.replace("{", r"\{").replace("}", r"\}")):
        validate_pattern(pattern)


def test_xml_is_added_when_missing() -> None:
    assert validate_pattern("{cnpj}/{chave}") == "{cnpj}/{chave}.xml"
