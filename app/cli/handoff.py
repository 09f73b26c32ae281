"""`handoff set | remove | log | resend | run`: each company's POST of captured documents to the ERP."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.context import open_desk, parse_day
from app.cli.io import print_json
from app.core.errors import CapturaError


def register(sub: Any) -> None:
    group = sub.add_parser("handoff", help="integração com o sistema do escritório (POST de cada documento)")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")
    setting = actions.add_parser("set", help="envia os documentos da empresa a este endereço (novo segredo)")
    setting.add_argument("cnpj", metavar="CNPJ")
    setting.add_argument("url", metavar="URL")
    setting.set_defaults(handler=_set)
    remove = actions.add_parser("remove", help="para de enviar os documentos da empresa")
    remove.add_argument("cnpj", metavar="CNPJ")
    remove.set_defaults(handler=_remove)
    logs = actions.add_parser("log", help="registro de envios (mais recentes primeiro)")
    logs.add_argument("--company", metavar="CNPJ")
    logs.add_argument("--limit", type=int, default=50)
    logs.add_argument("--json", action="store_true")
    logs.set_defaults(handler=_log)
    resend = actions.add_parser("resend", help="reenviar por chave ou por período de captura")
    resend.add_argument("cnpj", metavar="CNPJ")
    resend.add_argument("--key", action="append", metavar="CHAVE", help="chave de acesso (repita para várias)")
    resend.add_argument("--from", dest="date_from", metavar="AAAA-MM-DD", help="capturados a partir deste dia")
    resend.add_argument("--to", dest="date_to", metavar="AAAA-MM-DD", help="capturados até este dia (inclusive)")
    resend.set_defaults(handler=_resend)
    run = actions.add_parser("run", help="envia agora o que estiver devido (o serviço de captura envia a cada minuto)")
    run.set_defaults(handler=_run)


def _set(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        company = desk.company(args.cnpj)
        secret = desk.handoff.configure(company.id, args.url)
        header = desk.handoff.signature_header()
    print(f"Integração de {company.cnpj.formatted()} configurada: {args.url}")
    print(f"Segredo de assinatura (guardado no cofre de senhas; copie-o agora para o sistema de destino): {secret}")
    print(f"Cada envio traz o cabeçalho {header}: sha256=<HMAC-SHA256 do corpo com este segredo>.")
    return 0


def _remove(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        company = desk.company(args.cnpj)
        desk.handoff.remove(company.id)
    print(f"Integração de {company.cnpj.formatted()} removida; o registro de envios fica.")
    return 0


def _log(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        company_id = desk.company(args.company).id if args.company else None
        rows = desk.handoff.log(company_id, args.limit)
    if args.json:
        print_json(
            [
                {
                    "id": d.idempotency_key,
                    "type": d.event_type,
                    "action": d.action,
                    "status": d.status,
                    "attempts": d.attempts,
                    "http_status": d.last_http_status,
                    "error": d.last_error,
                    "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None,
                }
                for d in rows
            ]
        )
        return 0
    if not rows:
        print("Nenhum envio registrado.")
    for d in rows:
        state = "entregue" if d.status == "delivered" else f"pendente ({d.last_error or 'aguardando'})"
        print(f"{d.idempotency_key}  {d.event_type}/{d.action}  {d.attempts} tentativa(s)  {state}")
    return 0


def _resend(args: argparse.Namespace) -> int:
    first, last = parse_day(args.date_from, "--from"), parse_day(args.date_to, "--to")
    if not args.key and first is None and last is None:
        raise CapturaError("Informe --key ou o período (--from/--to) a reenviar.")
    with open_desk(args) as desk:
        company = desk.company(args.cnpj)
        count = desk.handoff.resend(company.id, keys=args.key or (), first=first, last=last)
    print(f"{count} envio(s) marcados para reenviar agora.")
    return 0


def _run(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        result = desk.handoff.run()
    print(
        f"{result.queued} novo(s), {result.delivered} entregue(s), {result.failed} com falha (tentados de novo depois)."
    )
    return 1 if result.failed else 0
