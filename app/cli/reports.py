"""`report documents | summary | gaps | deadlines | ibs-cbs --xlsx FILE | --csv FILE`: spreadsheets for the office."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.cli.context import open_desk, parse_day, parse_product
from app.core.errors import CapturaError
from app.store.records import Product

_REPORTS = {
    "documents": "lista de documentos (uma planilha por produto)",
    "summary": "resumo mensal por empresa: quantidades e totais por produto, conteúdo e direção",
    "gaps": "lacunas de NSU: encontradas, recuperadas e pendentes",
    "deadlines": "prazos de manifestação de NF-e recebidas ainda em aberto",
    "ibs-cbs": "créditos de IBS e CBS por empresa e mês (no CSV, os documentos vão para <arquivo>-documentos.csv)",
}


def register(sub: Any) -> None:
    group = sub.add_parser("report", help="relatórios em XLSX ou CSV")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="report", metavar="RELATÓRIO")
    for name, text in _REPORTS.items():
        report = actions.add_parser(name, help=text)
        output = report.add_mutually_exclusive_group(required=True)
        output.add_argument("--xlsx", type=Path, metavar="ARQUIVO", help="planilha do Excel")
        output.add_argument(
            "--csv", type=Path, metavar="ARQUIVO", help="CSV (';', vírgula decimal: como o Excel em português abre)"
        )
        report.add_argument("--company", metavar="CNPJ", help="só esta empresa (padrão: todas)")
        report.add_argument("--product", choices=[p.value for p in Product], help="só este produto")
        report.add_argument("--from", dest="date_from", metavar="AAAA-MM-DD", help="emitidos a partir deste dia")
        report.add_argument("--to", dest="date_to", metavar="AAAA-MM-DD", help="emitidos até este dia (inclusive)")
        report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    first, last = parse_day(args.date_from, "--from"), parse_day(args.date_to, "--to")
    if first and last and last < first:
        raise CapturaError("--to é anterior a --from.")
    product = parse_product(args.product)
    target: Path = args.xlsx or args.csv
    with open_desk(args) as desk:
        rows = desk.save_report(
            args.report,
            target,
            company_ids=(desk.company(args.company).id,) if args.company else (),
            products=(product,) if product else (),
            first_day=first,
            last_day=last,
            csv=args.csv is not None,
        )
    print(f"Relatório gravado em {target}: {rows} linha(s).")
    return 0
