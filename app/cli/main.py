"""Argument parsing and dispatch of the headless commands (exit codes: ``app.cli.exits``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from app import APP_NAME, __version__
from app.cli.args import ArgumentParser, UsageError
from app.cli.context import Runtime
from app.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_WAITING
from app.cli.io import utf8_streams
from app.core.errors import CapturaError
from app.demo import DEMO_SPEED

__all__ = ["EXIT_INTERRUPTED", "EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "EXIT_WAITING", "build_parser", "run_command"]
Handler = Callable[[argparse.Namespace], int]


def build_parser(*, commands: bool = True) -> argparse.ArgumentParser:
    """The whole command line; ``commands`` False gives only the options of the window and the
    demo, without importing the command modules (the window's start loads none of them)."""
    parser = ArgumentParser(
        prog="python main.py",
        description=f"{APP_NAME}: captura de NF-e, CT-e e NFS-e. Sem subcomando, abre a janela do aplicativo.",
    )
    parser.add_argument(
        "--version", action="version", version=f"{APP_NAME} {__version__}", help="mostra a versão do programa e sai"
    )
    parser.add_argument(
        "--data-dir",
        metavar="PASTA",
        help="pasta de dados (padrão: variável CAPTURA_DATA_DIR ou a pasta do usuário do sistema)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="banco do escritório, postgresql://usuario@servidor:5432/banco (também a variável "
        "CAPTURA_DATABASE): lembrado na pasta de dados, a senha no cofre de senhas; 'sqlite' volta ao "
        "arquivo da pasta de dados",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="demonstração contra o ambiente nacional simulado, numa pasta de dados separada",
    )
    demo = parser.add_argument_group("demonstração (com --demo, sem subcomando)")
    demo.add_argument("--headless", action="store_true", help="sem janela: mostra o andamento no terminal")
    demo.add_argument(
        "--speed",
        type=_positive_float,
        default=DEMO_SPEED,
        help=f"aceleração do relógio (padrão {DEMO_SPEED:g}: duas horas por minuto)",
    )
    demo.add_argument("--duration", type=_positive_float, metavar="SEGUNDOS", help="para sozinha após este tempo real")
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMANDO")
    from app.cli import (
        capture,
        certificates,
        companies,
        database,
        documents,
        export,
        handoff,
        manifest,
        reports,
        sandbox,
        status,
    )

    modules = (
        certificates,
        companies,
        capture,
        documents,
        export,
        reports,
        handoff,
        manifest,
        status,
        database,
        sandbox,
    )
    for module in modules:
        module.register(sub)
    return parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"número inválido: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("deve ser maior que zero")
    return value


def run_command(args: argparse.Namespace, *, runtime: Runtime | None = None) -> int:
    """Run the parsed subcommand. ``runtime`` replaces the clock in tests (see app.cli.context)."""
    args.runtime = runtime or Runtime()
    utf8_streams()  # --json into a file or a pipe, and a password piped in, in UTF-8 on Windows too
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        # A command group given without its action ("company"): show that group's help.
        group_parser: argparse.ArgumentParser | None = getattr(args, "group_parser", None)
        if group_parser is not None:
            group_parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except UsageError as error:
        print(f"Erro: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    except CapturaError as error:
        print(f"Erro: {error.message}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
