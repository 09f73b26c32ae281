"""`company add | list | set | resume`: the office's client companies and their capture settings."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import Any

from app.cli.args import add_password_options
from app.cli.context import open_desk
from app.cli.io import print_json, read_secret
from app.core.documents import PartyRole
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.desk.companies import engine_missing, uf_code
from app.store.records import CaptureSettings

_ENVIRONMENTS = {e.key: e for e in Environment}
# The CT-e interested-party filter (rule book §5.1): the role names a user types.
_CTE_ROLES = {
    "tomador": PartyRole.TAKER,
    "remetente": PartyRole.SENDER,
    "expedidor": PartyRole.SHIPPER,
    "recebedor": PartyRole.RECEIVER,
    "destinatario": PartyRole.RECIPIENT,
    "emitente": PartyRole.EMITTER,
}
_ROLE_NAMES = {role: name for name, role in _CTE_ROLES.items()}


def register(sub: Any) -> None:
    group = sub.add_parser("company", help="empresas clientes e suas configurações de captura")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")

    add = actions.add_parser("add", help="cadastra uma empresa a partir do seu certificado A1")
    add.add_argument("--pfx", type=Path, required=True, metavar="ARQUIVO", help="certificado A1 (.pfx/.p12)")
    add_password_options(add)
    add.add_argument("--cnpj", help="CNPJ de uma filial com a mesma raiz do certificado (padrão: o do certificado)")
    add.add_argument("--name", help="razão social (padrão: a do certificado)")
    add.add_argument("--environment", choices=sorted(_ENVIRONMENTS), default="producao")
    add.add_argument(
        "--products", default="nfe,cte,nfse", help="produtos a capturar, separados por vírgula (padrão: nfe,cte,nfse)"
    )
    add.add_argument("--json", action="store_true")
    add.set_defaults(handler=_add)

    listing = actions.add_parser("list", help="lista as empresas, o certificado e o que é capturado")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    settings = actions.add_parser("set", help="altera a captura de uma empresa num produto")
    settings.add_argument("cnpj")
    settings.add_argument("--product", choices=[p.value for p in Product], required=True)
    _switch(settings, "--enable", "--disable", "enabled")
    settings.add_argument("--environment", choices=sorted(_ENVIRONMENTS))
    _switch(
        settings,
        "--auto-ciencia",
        "--no-auto-ciencia",
        "auto_ciencia",
        "envia a Ciência da Operação automaticamente (só NF-e)",
    )
    settings.add_argument("--ciencia-wait", type=int, metavar="MINUTOS", help="espera antes da Ciência (mínimo 5)")
    settings.add_argument(
        "--uf", metavar="UF", help="UF do autor (cUFAutor: sigla ou código IBGE), exigida pela distribuição de CT-e"
    )
    settings.add_argument(
        "--event-types",
        metavar="TIPOS",
        help="CT-e: tipos de evento que notificam, separados por vírgula (ex.: 110111,610110); vazio: todos",
    )
    settings.add_argument(
        "--roles",
        metavar="PAPÉIS",
        help="CT-e: notifica só quando a empresa é um destes papéis (" + ", ".join(_CTE_ROLES) + "); vazio: todos",
    )
    settings.add_argument(
        "--cutoff", metavar="DATA", help="NFS-e: data de corte (dd/mm/aaaa); anteriores ficam guardadas sem aparecer"
    )
    _switch(
        settings,
        "--own-issued",
        "--no-own-issued",
        "own_issued",
        "NFS-e: lista e notifica também as NFS-e emitidas pela própria empresa",
    )
    settings.add_argument(
        "--release-history",
        action="store_true",
        help="NFS-e: libera as notas anteriores à data de corte (passam a ser listadas)",
    )
    settings.add_argument("--json", action="store_true")
    settings.set_defaults(handler=_set)

    again = actions.add_parser(
        "resume", help="retoma a captura de uma empresa interrompida (falhas seguidas) ou pausada"
    )
    again.add_argument("cnpj")
    again.add_argument("--product", choices=[p.value for p in Product], help="só este produto (padrão: todos)")
    again.add_argument("--json", action="store_true")
    again.set_defaults(handler=_resume)


def _products(text: str) -> list[Product]:
    try:
        return [Product(part.strip().lower()) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise CapturaError(f"Produto desconhecido em {text!r}: use nfe, cte e/ou nfse.") from error


def _enabled_label(product: Product) -> str:
    return product.label + (" (sem captura nesta versão)" if engine_missing(product) else "")


def _settings_json(settings: CaptureSettings) -> dict[str, Any]:
    return {
        "product": settings.product.value,
        "enabled": settings.enabled,
        "engine_available": engine_missing(settings.product) is None,
        "environment": settings.environment.key,
        "auto_ciencia": settings.auto_ciencia,
        "ciencia_wait_minutes": settings.ciencia_wait_minutes,
        "c_uf_autor": settings.c_uf_autor,
        "cte_event_types": list(settings.cte_event_types),
        "cte_roles": [_ROLE_NAMES[role] for role in settings.cte_party_roles if role in _ROLE_NAMES],
        "nfse_cutoff_date": settings.nfse_cutoff_date.isoformat() if settings.nfse_cutoff_date else None,
        "nfse_capture_own_issued": settings.nfse_capture_own_issued,
        "nfse_history_released": settings.nfse_history_released,
    }


def _event_types(text: str) -> tuple[str, ...]:
    types = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    bad = [t for t in types if not (len(t) == 6 and t.isdigit())]
    if bad:
        raise CapturaError(f"Tipo de evento inválido: {', '.join(bad)} (seis dígitos, ex.: 110111).")
    return types


def _roles(text: str) -> tuple[PartyRole, ...]:
    names = [part.strip().lower().replace("á", "a") for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in _CTE_ROLES]
    if unknown:
        raise CapturaError(f"Papel desconhecido: {', '.join(unknown)} (use {', '.join(_CTE_ROLES)}).")
    return tuple(dict.fromkeys(_CTE_ROLES[n] for n in names))


def _switch(parser: argparse.ArgumentParser, on: str, off: str, dest: str, text: str | None = None) -> None:
    """A pair of exclusive flags setting ``dest`` True or False; None (unchanged) when neither is given."""
    pair = parser.add_mutually_exclusive_group()
    pair.add_argument(on, dest=dest, action="store_true", default=None, help=text)
    pair.add_argument(off, dest=dest, action="store_false")


def _add(args: argparse.Namespace) -> int:
    try:
        pfx = args.pfx.read_bytes()
    except OSError as error:
        raise CapturaError(f"Não foi possível ler o arquivo {args.pfx}: {error.strerror}.") from error
    products = _products(args.products)
    password = read_secret("Senha do certificado: ", from_stdin=args.password_stdin, password_file=args.password_file)
    cnpj = Cnpj.parse(args.cnpj).value if args.cnpj else None
    with open_desk(args) as desk:
        # Registered at another workstation of the office database: its certificate comes here too.
        company = imported = desk.admin.import_certificate(pfx, password, cnpj=cnpj)
        if company is None:
            company = desk.admin.add_company(
                pfx,
                password,
                cnpj=cnpj,
                name=args.name,
                environment=_ENVIRONMENTS[args.environment],
                products=products,
            )
    if args.json:
        print_json({"id": company.id, "cnpj": company.cnpj.value, "name": company.name, "imported": bool(imported)})
    elif imported is not None:
        print(
            f"Certificado importado nesta estação: {company.cnpj.formatted()} {company.name} "
            "(empresa já cadastrada no banco do escritório; as configurações de captura ficam as de lá)"
        )
        return 0
    else:
        print(f"Empresa cadastrada: {company.cnpj.formatted()} {company.name}")
    for product in products:  # enabled as asked, but never silently left uncaptured
        reason = engine_missing(product)
        if reason is not None:
            print(f"Aviso: {reason}", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        overview = desk.admin.overview()
    if args.json:
        print_json(
            [
                {
                    "id": item.company.id,
                    "cnpj": item.company.cnpj.value,
                    "name": item.company.name,
                    "active": item.company.active,
                    "certificate_not_after": item.certificate.not_after,
                    "certificate_problem": item.certificate.problem,
                    "products": [_settings_json(s) for s in item.settings],
                }
                for item in overview
            ]
        )
        return 0
    if not overview:
        print("Nenhuma empresa cadastrada. Use: python main.py company add --pfx ARQUIVO")
    for item in overview:
        enabled = ", ".join(_enabled_label(s.product) for s in item.settings if s.enabled) or "nenhum produto ativo"
        cert = item.certificate.problem or f"certificado válido até {item.certificate.not_after:%d/%m/%Y}"
        print(f"{item.company.cnpj.formatted()}  {item.company.name}  [{enabled}]  {cert}")
    return 0


def _set(args: argparse.Namespace) -> int:
    cnpj = Cnpj.parse(args.cnpj)
    product = Product(args.product)
    with open_desk(args) as desk:
        company = desk.company(cnpj.value)
        changes: dict[str, Any] = {}
        if args.enabled is not None:
            changes["enabled"] = args.enabled
        if args.environment:
            changes["environment"] = _ENVIRONMENTS[args.environment]
        if args.auto_ciencia is not None:
            changes["auto_ciencia"] = args.auto_ciencia
        if args.ciencia_wait is not None:
            changes["ciencia_wait_minutes"] = args.ciencia_wait
        if args.uf is not None:
            changes["c_uf_autor"] = uf_code(args.uf)
        if args.event_types is not None or args.roles is not None:
            if args.event_types is not None:
                changes["cte_event_types"] = _event_types(args.event_types)
            if args.roles is not None:
                changes["cte_party_roles"] = _roles(args.roles)
        nfse_options = args.cutoff is not None or args.own_issued is not None or args.release_history
        if nfse_options and product is not Product.NFSE:
            raise CapturaError("Data de corte, NFS-e próprias e liberação do histórico só existem para NFS-e.")
        if args.cutoff is not None:
            changes["nfse_cutoff_date"] = _date(args.cutoff)
        if args.own_issued is not None:
            changes["nfse_capture_own_issued"] = args.own_issued
        if args.release_history:
            changes["nfse_history_released"] = True
        saved, released = desk.admin.change_settings(company.id, product, **changes)
    if args.json:
        print_json({**_settings_json(saved), "released": released})
    else:
        print(f"{company.cnpj.formatted()} {product.label}: " + ("ativa" if saved.enabled else "desativada"))
        if args.release_history:
            print(f"Histórico liberado: {released} NFS-e anterior(es) à data de corte passa(m) a ser listada(s).")
    return 0


def _date(text: str) -> date | None:
    """dd/mm/aaaa or aaaa-mm-dd; empty text clears the cutoff."""
    text = text.strip()
    if not text:
        return None
    try:
        if "/" in text:
            day, month, year = (int(part) for part in text.split("/"))
            return date(year, month, day)
        return date.fromisoformat(text)
    except ValueError as error:
        raise CapturaError(f"Data inválida: {text!r} (use dd/mm/aaaa).") from error


def _resume(args: argparse.Namespace) -> int:
    cnpj = Cnpj.parse(args.cnpj)
    with open_desk(args) as desk:
        company = desk.company(cnpj.value)
        resumed = desk.admin.resume(company.id, Product(args.product) if args.product else None)
    if args.json:
        print_json({"cnpj": company.cnpj.value, "resumed": [p.value for p in resumed]})
    elif resumed:
        labels = ", ".join(p.label for p in resumed)
        print(
            f"{company.cnpj.formatted()}: captura de {labels} retomada "
            "(um serviço em execução volta a consultá-la em até 1 hora)."
        )
    else:
        print(f"{company.cnpj.formatted()}: nenhuma captura interrompida ou pausada.")
    return 0
