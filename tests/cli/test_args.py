"""The command line speaks Portuguese, argparse's own words included, and misuse exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.launcher import main


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def test_an_unknown_action_is_refused_in_portuguese(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["company", "bogus"], capsys)
    assert "uso: python main.py company" in err
    assert "erro: argumento AÇÃO: opção inválida: 'bogus' (escolha entre 'add', 'list', 'set', 'resume')" in err
    assert "usage" not in err and "invalid choice" not in err and "error:" not in err


def test_a_missing_required_option_is_named_in_portuguese(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["company", "add"], capsys)
    assert "faltam os argumentos obrigatórios: --pfx" in err
    assert "required" not in err


def test_unknown_options_and_bad_numbers_are_portuguese(capsys: pytest.CaptureFixture[str]) -> None:
    assert "argumentos não reconhecidos: --bogus" in _usage_error(["status", "--bogus"], capsys)
    assert "número inválido" in _usage_error(["--demo", "--speed", "x"], capsys)


def test_help_titles_are_portuguese(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["documents", "list", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("uso: python main.py documents list")
    assert "opções:" in out and "mostra esta ajuda e sai" in out
    assert "show this help" not in out and "options:" not in out


def test_a_bad_from_date_is_a_usage_error(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["documents", "list", "--from", "2026-13-01"]) == 2
    assert "Data inválida em --from: '2026-13-01'. Use AAAA-MM-DD." in capsys.readouterr().err


def test_an_unknown_event_is_a_usage_error_that_lists_the_valid_ones(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "35261199888777000100550010000000011000000010"
    assert main(["manifest", key, "aceite"]) == 2
    err = capsys.readouterr().err
    assert "Evento desconhecido: 'aceite'" in err
    for valid in ("210200 (confirmacao)", "210210 (ciencia)", "210220 (desconhecimento)", "210240 (nao-realizada)"):
        assert valid in err
