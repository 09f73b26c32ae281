"""`sandbox serve`: the national-environment simulator as a standalone HTTPS server."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    group = sub.add_parser("sandbox", help="ambiente nacional simulado (demonstração e testes)")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")
    serve = actions.add_parser(
        "serve",
        help="serve NF-e, CT-e, eventos, ADN e Sefin simulados por HTTPS com TLS mútuo",
        description="Sobe o ambiente nacional simulado e, opcionalmente, grava a PKI de teste e um "
        "settings.json que aponta o aplicativo para ele.",
    )
    from app.sandbox.serve import add_arguments

    add_arguments(serve)
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from app.sandbox.serve import run

    return run(args)
