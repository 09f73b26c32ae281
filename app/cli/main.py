"""Argument parsing and dispatch of the headless commands.

Exit codes: 0 success, 1 a refusal the user can act on (message on stderr), 2 wrong usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from app import APP_NAME, __version__
from app.core.errors import CapturaError

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python main.py",
        description=f"{APP_NAME}: captura de NF-e, CT-e e NFS-e. Sem subcomando, abre a janela do aplicativo.",
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    parser.add_argument(
        "--data-dir",
        metavar="PASTA",
        help="pasta de dados (padrão: variável CAPTURA_DATA_DIR ou a pasta do usuário do sistema)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="demonstração contra o ambiente nacional simulado, numa pasta de dados separada",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMANDO")
    from app.cli import certificates, companies, sandbox

    for module in (certificates, companies, sandbox):
        module.register(sub)
    return parser


def run_command(args: argparse.Namespace) -> int:
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        # A command group given without its action ("company"): show that group's help.
        group_parser: argparse.ArgumentParser | None = getattr(args, "group_parser", None)
        if group_parser is not None:
            group_parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except CapturaError as error:
        print(f"Erro: {error.message}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return 130
