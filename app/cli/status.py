"""`status`: per company and product, what the capture is doing and until when."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli.context import open_desk
from app.cli.io import print_json
from app.core.cadence import display_time
from app.core.ids import Cnpj
from app.desk.labels import answer_message

if TYPE_CHECKING:
    from app.desk.capturing import CompanyStatus


def register(sub: Any) -> None:
    parser = sub.add_parser("status", help="situação da captura por empresa e produto")
    parser.add_argument("--json", action="store_true", help="saída em JSON")
    parser.set_defaults(handler=_status)


def describe(status: CompanyStatus, now: Any) -> str:
    who = f"{Cnpj.parse(status.cnpj).formatted()} {status.name}"
    label = status.label
    if status.until is not None:
        label += f" até {display_time(status.until, now)}"
    parts = [f"{who} · {status.product.label}: {label}"]
    if status.reason:
        parts.append(status.reason)
    if status.last_cstat:
        message = answer_message(status.last_cstat, status.last_message)  # the ADN's carry the code
        parts.append(f"último cStat {status.last_cstat}" + (f" ({message})" if message else ""))
    parts.append(f"{status.documents_today} documento(s) hoje")
    if status.pending_recoveries:
        parts.append(f"{status.pending_recoveries} recuperação(ões) pendente(s)")
    if status.stalled:
        parts.append("captura travada: reiniciando")
    return " | ".join(parts)


def _status(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        holder, statuses = desk.rounds.status()  # another capturer's state is in the database
        now = desk.now()
        node = desk.capture_node()  # which workstation captures for the office
    if args.json:
        print_json([s.to_json() for s in statuses])
        return 0
    print(node.text(now))
    if holder is not None:
        print(
            f"A captura desta pasta está com: {holder}. A situação abaixo é a que ela grava no banco "
            "(os certificados e as consultas em andamento ficam com ela)."
        )
    if not statuses:
        print("Nenhuma empresa configurada para capturar. Use: python main.py company add --pfx ARQUIVO")
    for status in statuses:
        print(describe(status, now))
    return 0
