"""`certificate show FILE`: open an A1 file and say whose it is, without storing anything."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.cli.args import add_password_options
from app.cli.io import print_json, read_secret
from app.core.clock import SystemClock
from app.core.errors import CapturaError


def register(sub: Any) -> None:
    group = sub.add_parser("certificate", help="certificados A1")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")
    show = actions.add_parser("show", help="mostra titular, CNPJ, emissor e validade de um arquivo .pfx/.p12")
    show.add_argument("file", type=Path, metavar="ARQUIVO")
    add_password_options(show, "a senha")
    show.add_argument("--json", action="store_true", help="saída em JSON")
    show.set_defaults(handler=_show)


def _show(args: argparse.Namespace) -> int:
    from app.desk.companies import preview_certificate  # cryptography: only when a file is opened

    try:
        pfx = args.file.read_bytes()
    except OSError as error:
        raise CapturaError(f"Não foi possível ler o arquivo {args.file}: {error.strerror}.") from error
    password = read_secret("Senha do certificado: ", from_stdin=args.password_stdin, password_file=args.password_file)
    cert = preview_certificate(pfx, password, SystemClock().now())
    if args.json:
        print_json(
            {
                "cnpj": cert.cnpj,
                "cpf": cert.cpf,
                "holder_name": cert.holder_name,
                "subject": cert.subject,
                "issuer": cert.issuer,
                "not_before": cert.not_before.isoformat(),
                "not_after": cert.not_after.isoformat(),
                "sha1_fingerprint": cert.sha1_fingerprint,
            }
        )
    else:
        print("\n".join(cert.lines))
    return 0
