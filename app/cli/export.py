"""`export DEST` (a one-off export, optionally zipped) and `export-profile add | list | remove | run`
(the automatic exports the capture service runs every minute)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.cli.context import open_desk, parse_day, parse_product
from app.cli.io import print_json
from app.core.errors import CapturaError
from app.desk.exports import ARCHIVE, DEFAULT_PATTERN, PRESETS, preset, preview
from app.store.records import EXPORT_KINDS as KINDS
from app.store.records import Direction, ExportProfile, Product


def register(sub: Any) -> None:
    export = sub.add_parser("export", help="exporta XML capturados para uma pasta (e, se quiser, um ZIP)")
    export.add_argument("destination", metavar="DESTINO", help="pasta de destino (criada se não existir)")
    export.add_argument("--company", metavar="CNPJ", help="só esta empresa (padrão: todas)")
    export.add_argument("--product", choices=[p.value for p in Product], help="só este produto")
    export.add_argument("--from", dest="date_from", metavar="AAAA-MM-DD", help="emitidos a partir deste dia")
    export.add_argument("--to", dest="date_to", metavar="AAAA-MM-DD", help="emitidos até este dia (inclusive)")
    export.add_argument("--pattern", default=DEFAULT_PATTERN, help=f"padrão de nomes (padrão: {DEFAULT_PATTERN})")
    export.add_argument(
        "--cancelled",
        choices=["move", "beside"],
        default="move",
        help="NF-e cancelada: move (pasta Canceladas, padrão) ou beside (evento de cancelamento ao lado)",
    )
    export.add_argument("--pdf", action="store_true", help="inclui o PDF (DANFE, DACTE, DANFSe) de cada documento")
    export.add_argument("--zip", metavar="ARQUIVO", type=Path, help="também grava um ZIP dos arquivos exportados")
    export.add_argument("--json", action="store_true", help="resumo em JSON")
    export.set_defaults(handler=_export)

    group = sub.add_parser("export-profile", help="perfis de exportação automática (pastas que o ERP lê)")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")
    add = actions.add_parser("add", help="cria um perfil: exporta o que já chegou e o que chegar")
    add.add_argument("name", metavar="NOME")
    add.add_argument("destination", metavar="DESTINO")
    add.add_argument(
        "--preset",
        choices=PRESETS,
        default=ARCHIVE,
        help="arquivo: tudo numa árvore por empresa e mês (padrão); importacao: só documentos completos "
        "autorizados, um arquivo por chave, sem resumos nem eventos",
    )
    add.add_argument("--pattern", help="padrão de nomes (padrão: o do preset)")
    add.add_argument("--product", action="append", choices=[p.value for p in Product], help="só este produto")
    add.add_argument("--kinds", help=f"conteúdo, separado por vírgula: {', '.join(KINDS)} (padrão: o do preset)")
    add.add_argument("--company", action="append", metavar="CNPJ", help="só esta empresa (repita para várias)")
    add.add_argument("--direction", choices=[d.value for d in Direction], help="só recebidos ou só emitidos")
    add.add_argument("--cancelled", choices=["move", "beside"], default="move", help="NF-e cancelada (ver export)")
    add.add_argument("--pdf", action="store_true", help="inclui os PDFs")
    add.add_argument("--json", action="store_true")
    add.set_defaults(handler=_add)
    listing = actions.add_parser("list", help="lista os perfis e como vai cada um")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)
    remove = actions.add_parser("remove", help="remove um perfil (os arquivos já exportados ficam)")
    remove.add_argument("name", metavar="NOME")
    remove.set_defaults(handler=_remove)
    run = actions.add_parser("run", help="roda agora os perfis ativos (o serviço de captura roda a cada minuto)")
    run.add_argument("--json", action="store_true")
    run.set_defaults(handler=_run)


def _export(args: argparse.Namespace) -> int:
    destination = Path(args.destination)
    with open_desk(args) as desk:
        company_ids = (desk.company(args.company).id,) if args.company else ()
        product = parse_product(args.product)
        report = desk.exports.export(
            destination,
            company_ids=company_ids,
            products=(product,) if product else (),
            first_day=parse_day(args.date_from, "--from"),
            last_day=parse_day(args.date_to, "--to"),
            pattern=args.pattern,
            pdf=args.pdf,
            cancelled_mode=args.cancelled,
            zip_path=args.zip,
        )
    files = report.files
    summary = {
        "documents": report.documents,
        "events": report.events,
        "written": len(files.written),
        "unchanged": len(files.unchanged),
        "removed": len(files.removed),
        "skipped_unreadable": report.skipped,
        "zip": str(report.zip_path) if report.zip_path else None,
    }
    if args.json:
        print_json(summary)
        return 0
    print(
        f"{report.documents} documento(s) e {report.events} evento(s) exportados para {destination}: "
        f"{len(files.written)} arquivo(s) gravado(s), {len(files.unchanged)} já estavam iguais."
    )
    if files.removed:
        print(f"{len(files.removed)} arquivo(s) substituído(s) (resumo pela NF-e completa, cancelada movida).")
    if report.skipped:
        print(f"{report.skipped} documento(s) ilegível(is) sem chave de acesso não foram exportados.")
    if report.zip_path:
        print(f"ZIP gravado: {report.zip_path}")
    return 0


def _kinds(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    kinds = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise CapturaError(f"Conteúdo desconhecido: {', '.join(unknown)}. Use {', '.join(KINDS)}.")
    return kinds


def _add(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        profile = preset(args.preset, args.name, str(Path(args.destination).expanduser().resolve()), args.pattern)
        kinds = _kinds(args.kinds)
        profile = replace(
            profile,
            products=tuple(Product(p) for p in args.product or ()),
            kinds=kinds if kinds is not None else profile.kinds,
            company_ids=tuple(desk.company(c).id for c in args.company or ()),
            directions=(Direction(args.direction),) if args.direction else (),
            cancelled_mode=args.cancelled,
            include_pdf=args.pdf,
        )
        saved = desk.exports.save_profile(profile)
    if args.json:
        print_json(_profile_json(saved, 0))
        return 0
    print(f"Perfil {saved.name!r} criado: {saved.destination}")
    print(f"Exemplo de caminho: {preview(saved.pattern)}")
    return 0


def _profile_json(profile: ExportProfile, queued: int) -> dict[str, object]:
    return {
        "name": profile.name,
        "destination": profile.destination,
        "pattern": profile.pattern,
        "products": [p.value for p in profile.products],
        "kinds": list(profile.kinds),
        "only_authorised": profile.only_authorised,
        "cancelled": profile.cancelled_mode,
        "pdf": profile.include_pdf,
        "active": profile.active,
        "exported": profile.exported_count,
        "queued": queued,
        "last_error": profile.last_error,
        "next_attempt_at": profile.next_attempt_at.isoformat() if profile.next_attempt_at else None,
    }


def _list(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        rows = [(p, desk.exports.queued(p)) for p in desk.exports.profiles()]
    if args.json:
        print_json([_profile_json(p, q) for p, q in rows])
        return 0
    if not rows:
        print("Nenhum perfil de exportação.")
        return 0
    for profile, queued in rows:
        state = f"com falha: {profile.last_error}" if profile.last_error else "em dia"
        print(f"{profile.name}: {profile.destination} ({profile.pattern})")
        print(f"    {profile.exported_count} exportado(s), {queued} na fila, {state}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        desk.exports.remove_profile(args.name)
    print(f"Perfil {args.name!r} removido; os arquivos já exportados ficam na pasta.")
    return 0


def _run(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        runs = desk.exports.run_profiles()
    if args.json:
        print_json([{"profile": r.profile, "queued": r.queued, "written": r.written, "failed": r.failed} for r in runs])
    else:
        for r in runs:
            print(f"{r.profile}: {r.written} item(ns) exportado(s)" + (f"; {r.failed}" if r.failed else ""))
        if not runs:
            print("Nenhum perfil ativo com exportação devida agora.")
    return 1 if any(r.failed for r in runs) else 0
