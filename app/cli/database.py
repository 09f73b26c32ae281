"""`database migrate --to postgresql://…`: the data folder's SQLite database moved to the office
server (resumable, verified), through the desk (app.desk.migration)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli.args import add_group, add_password_options
from app.cli.context import data_dir_of
from app.cli.exits import EXIT_OK, EXIT_REFUSED
from app.cli.io import read_secret


def register(sub: Any) -> None:
    actions = add_group(sub, "database", "o banco de dados: migrar o SQLite para o banco do escritório")
    migrate = actions.add_parser(
        "migrate",
        help="copia o banco SQLite desta pasta de dados para um banco PostgreSQL vazio, confere e passa a usá-lo; "
        "interrompida, rode de novo que ela continua",
    )
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql://usuario@servidor:5432/banco")
    add_password_options(migrate, "a senha do banco do escritório")
    migrate.set_defaults(handler=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    from app.desk.migration import migrate_to_office

    password = None
    if args.password_stdin or args.password_file is not None:
        password = read_secret(
            "Senha do banco do escritório: ", from_stdin=args.password_stdin, password_file=args.password_file
        )
    shown: dict[str, int] = {}

    def progress(table: str, copied: int, total: int) -> None:
        step = max(total // 10, 1)  # about ten lines per big table, one per small one
        if copied >= total or copied - shown.get(table, 0) >= step:
            shown[table] = copied
            print(f"  {table}: {copied} de {total}", file=sys.stderr, flush=True)

    print("Copiando o banco SQLite para o banco do escritório…", file=sys.stderr, flush=True)
    summary = migrate_to_office(data_dir_of(args), args.to, password=password, progress=progress)
    for line in summary.lines():
        print(line)
    return EXIT_OK if summary.report.ok else EXIT_REFUSED
