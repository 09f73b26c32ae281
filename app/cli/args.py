"""argparse in Brazilian Portuguese: every parser of the app is a :class:`ArgumentParser` from here.

argparse builds its own words ("usage:", "invalid choice", "the following arguments are
required") through ``gettext`` at the moment it needs them, looked up as the module attributes
``argparse._`` and ``argparse.ngettext``; :func:`install` points those at this catalogue, so
every message argparse writes (errors, help titles, usage) reaches the user in Portuguese.
A message without a translation stays as argparse wrote it.
"""

from __future__ import annotations

import argparse
import gettext
from pathlib import Path
from typing import Any

from app.core.errors import CapturaError

EXIT_USAGE = 2

# argparse's msgids (CPython 3.11-3.13) and their Portuguese.
CATALOG: dict[str, str] = {
    "usage: ": "uso: ",
    "positional arguments": "argumentos",
    "options": "opções",
    "optional arguments": "opções",
    "show this help message and exit": "mostra esta ajuda e sai",
    "show program's version number and exit": "mostra a versão do programa e sai",
    "subcommands": "comandos",
    "%(prog)s: error: %(message)s\n": "%(prog)s: erro: %(message)s\n",
    "argument %(argument_name)s: %(message)s": "argumento %(argument_name)s: %(message)s",
    "invalid choice: %(value)r (choose from %(choices)s)": "opção inválida: %(value)r (escolha entre %(choices)s)",
    "invalid %(type)s value: %(value)r": "valor inválido (%(type)s): %(value)r",
    "the following arguments are required: %s": "faltam os argumentos obrigatórios: %s",
    "unrecognized arguments: %s": "argumentos não reconhecidos: %s",
    "not allowed with argument %s": "não pode ser usado junto com o argumento %s",
    "ignored explicit argument %r": "argumento explícito ignorado: %r",
    "one of the arguments %s is required": "é obrigatório um dos argumentos %s",
    "expected one argument": "esperava um valor",
    "expected at most one argument": "esperava no máximo um valor",
    "expected at least one argument": "esperava ao menos um valor",
    "ambiguous option: %(option)s could match %(matches)s": "opção ambígua: %(option)s pode ser %(matches)s",
    "unexpected option string: %s": "opção inesperada: %s",
    "unknown parser %(parser_name)r (choices: %(choices)s)": (
        "comando desconhecido %(parser_name)r (opções: %(choices)s)"
    ),
    "can't open '%(filename)s': %(error)s": "não foi possível abrir '%(filename)s': %(error)s",
}
PLURALS: dict[str, tuple[str, str]] = {
    "expected %s argument": ("esperava %s valor", "esperava %s valores"),
}


def translate(message: str) -> str:
    return CATALOG.get(message, message)


def translate_plural(singular: str, plural: str, count: int) -> str:
    words = PLURALS.get(singular)
    if words is None:
        return gettext.ngettext(singular, plural, count)
    return words[0] if count == 1 else words[1]


def install() -> None:
    """Route argparse's gettext lookups through the catalogue (idempotent)."""
    argparse._ = translate  # type: ignore[attr-defined]
    argparse.ngettext = translate_plural  # type: ignore[attr-defined]


class UsageError(CapturaError):
    """Wrong use of the command line found after parsing (a bad date, an unknown event): exit 2."""


def add_password_options(parser: argparse.ArgumentParser, what: str = "a senha do certificado") -> None:
    """``--password-stdin`` and ``--password-file ARQUIVO`` (one of them; neither: a prompt).
    Read them with ``app.cli.io.read_secret(..., from_stdin=args.password_stdin,
    password_file=args.password_file)``."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--password-stdin", action="store_true", help=f"lê {what} da entrada padrão")
    source.add_argument(
        "--password-file",
        type=Path,
        metavar="ARQUIVO",
        help=f"lê {what} de um arquivo de texto (UTF-8 ou UTF-16 com BOM; só a quebra de linha final é ignorada)",
    )


def add_group(sub: Any, name: str, help_text: str, dest: str = "action") -> Any:
    """A command group (``database``) whose actions (``migrate``) are subparsers of the result;
    the group given alone shows its help (app.cli.main)."""
    group = sub.add_parser(name, help=help_text)
    group.set_defaults(group_parser=group)
    return group.add_subparsers(dest=dest, metavar="AÇÃO")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` speaking Portuguese; its subparsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        install()
        super().__init__(*args, **kwargs)


install()
