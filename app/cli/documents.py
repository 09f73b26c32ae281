"""`documents list | show | xml | pdf | fetch`: the captured documents, as stored, for scripts and
people; ``fetch`` asks for one by its key (the database first, then the service)."""

from __future__ import annotations

import argparse
import heapq
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.context import open_desk, parse_day, parse_product
from app.cli.exits import EXIT_WAITING
from app.cli.io import print_json
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.keys import key_problem
from app.core.nsu import Nsu
from app.core.products import Product
from app.desk import labels
from app.desk.files import write_atomic
from app.desk.labels import DIRECTION as DIRECTION_LABELS
from app.desk.labels import MANIFESTATION_STATUS as MANIFESTATION_LABELS
from app.desk.labels import PDF_NAMES, money, money_br
from app.desk.labels import STATUS as STATUS_LABELS
from app.desk.views import PAGE, DocumentDetail, GridFilter, GridRow  # not desk.grid: `--help` loads no SQL
from app.store.records import Direction, DocumentKind, DocumentStatus, RowKind

if TYPE_CHECKING:  # the desk loads when a command opens it, never for `--help`
    from app.desk import Desk

EVENT_KIND = "event"  # --kind event: keys known only by their events


def register(sub: Any) -> None:
    group = sub.add_parser("documents", help="documentos capturados: lista, detalhes, XML e PDF")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")

    listing = actions.add_parser("list", help="lista documentos com filtros (mais recentes primeiro)")
    listing.add_argument("--company", metavar="CNPJ", help="só esta empresa (padrão: todas)")
    listing.add_argument("--product", choices=[p.value for p in Product], help="só este produto")
    listing.add_argument(
        "--kind",
        help="tipos separados por vírgula: "
        + ", ".join([*(k.value for k in DocumentKind), EVENT_KIND])
        + f" ({EVENT_KIND}: chaves das quais só chegaram eventos)",
    )
    listing.add_argument("--from", dest="date_from", metavar="AAAA-MM-DD", help="emitidos a partir deste dia")
    listing.add_argument("--to", dest="date_to", metavar="AAAA-MM-DD", help="emitidos até este dia (inclusive)")
    listing.add_argument("--emitter", metavar="CNPJ/CPF", help="só deste emitente")
    listing.add_argument("--direction", choices=[d.value for d in Direction], help="recebidos ou emitidos")
    listing.add_argument("--status", choices=[s.value for s in DocumentStatus], help="situação")
    listing.add_argument("--limit", type=_positive, default=100, help="quantos no máximo (padrão 100)")
    listing.add_argument("--offset", type=_not_negative, default=0, help="quantos pular (paginação)")
    listing.add_argument("--json", action="store_true", help="saída em JSON")
    listing.set_defaults(handler=_list)

    show = actions.add_parser("show", help="metadados, versões, eventos e manifestações de um documento")
    show.add_argument("key", metavar="CHAVE")
    show.add_argument("--company", metavar="CNPJ", help="empresa (se a chave estiver em mais de uma)")
    show.add_argument("--json", action="store_true", help="saída em JSON")
    show.set_defaults(handler=_show)

    _saving(
        actions,
        "xml",
        "grava o XML guardado, idêntico byte a byte ao recebido",
        "arquivo de saída ('-' = saída padrão)",
        _xml,
    )

    fetch = actions.add_parser(
        "fetch",
        help="busca um documento pela chave: da base, ou do serviço (NF-e: consChNFe; NFS-e: Sefin Nacional)",
        description="Mostra o documento da base; se não estiver lá, consulta o serviço (a NF-e dentro da cota "
        "de consultas pontuais), guarda e mostra. Não gera notificação: quando o mesmo documento chegar pela "
        "distribuição, ele é reconhecido e notificado nesse momento.",
    )
    fetch.add_argument("key", metavar="CHAVE", help="chave de acesso da NF-e (44) ou da NFS-e (50)")
    fetch.add_argument("--company", metavar="CNPJ", help="empresa que consulta (padrão: a única cadastrada)")
    fetch.add_argument("--json", action="store_true", help="saída em JSON")
    fetch.set_defaults(handler=_fetch)

    _saving(actions, "pdf", "DANFE, DACTE ou DANFSe do documento", "arquivo PDF de saída", _pdf)


def _saving(actions: Any, name: str, text: str, output_text: str, handler: Callable[[argparse.Namespace], int]) -> None:
    """A command that writes one document's bytes (its XML, its PDF) to ``--output``."""
    command = actions.add_parser(name, help=text)
    command.add_argument("key", metavar="CHAVE")
    command.add_argument("-o", "--output", required=True, metavar="ARQUIVO", help=output_text)
    command.add_argument("--company", metavar="CNPJ", help="empresa (se a chave estiver em mais de uma)")
    command.set_defaults(handler=handler)


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("deve ser maior que zero")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("não pode ser negativo")
    return value


# ---------------------------------------------------------------------------- formatting


def _nsu(value: int | None) -> str | None:
    return str(Nsu(value)) if value is not None else None


def _iso(value: datetime | None) -> str | None:
    return labels.issued_iso(value, None) if value is not None else None


def document_json(row: GridRow, company_cnpj: str) -> dict[str, Any]:
    return {
        "company": company_cnpj,
        "product": row.product.value,
        "kind": row.kind.value if row.kind is not None else EVENT_KIND,
        "nsu": _nsu(row.nsu),
        "key": row.access_key,
        "model": row.model,
        "serie": row.serie,
        "number": row.number,
        "issuer": {"id": row.emitter_id, "name": row.emitter_name},
        "recipient": {"id": row.recipient_id, "name": row.recipient_name},
        "total": money(row.total_cents),
        "total_cents": row.total_cents,
        "net": money(row.net_cents),  # NFS-e: vLiq, what the taker pays where taxes are withheld
        "net_cents": row.net_cents,
        # the tax reform's values (None: the document carries no IBS/CBS groups)
        "ibs": money(row.ibs_cents),
        "ibs_cents": row.ibs_cents,
        "cbs": money(row.cbs_cents),
        "cbs_cents": row.cbs_cents,
        "is": money(row.is_cents),
        "is_cents": row.is_cents,
        "reform_unreadable": row.reform_unreadable,
        "issued_at": labels.issued_iso(row.issued_at, row.issued_offset_minutes),
        "direction": row.direction.value,
        "status": row.status.value,
        "situation": row.situation,
        "quarantined": row.quarantined,
        "parse_error": row.parse_error,
        "versions": row.version_count,
        "events_count": row.event_count,
    }


# ---------------------------------------------------------------------------- list


def _kinds(text: str | None) -> tuple[tuple[DocumentKind, ...], bool]:
    """The stored layouts asked for, and whether key-event rows are (no --kind: everything)."""
    if not text:
        return (), True
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        kinds = tuple(DocumentKind(part) for part in parts if part != EVENT_KIND)
    except ValueError:
        known = ", ".join([*(k.value for k in DocumentKind), EVENT_KIND])
        raise CapturaError(f"Tipo de documento desconhecido em {text!r}. Tipos: {known}.") from None
    return kinds, EVENT_KIND in parts


def _emitter(text: str | None) -> str | None:
    if text is None:
        return None
    value = "".join(ch for ch in text if ch.isalnum()).upper()
    if len(value) not in (11, 14):
        raise CapturaError(f"Emitente inválido: {text!r}. Informe um CNPJ ou CPF.")
    return value


def _sort_key(row: GridRow) -> tuple[bool, datetime, int]:
    # The grid's order: issue date, newest first, with undated documents last.
    return (row.issued_at is not None, row.issued_at or datetime.min.replace(tzinfo=UTC), row.row_id)


def _first(desk: Desk, grid: GridFilter, wanted: int) -> list[GridRow]:
    cursor = desk.cursor(grid)
    rows: list[GridRow] = []
    while len(rows) < wanted and not cursor.at_end:
        rows += cursor.next_page(min(PAGE, wanted - len(rows)))
    return rows[:wanted]


def list_documents(desk: Desk, args: argparse.Namespace) -> list[tuple[str, GridRow]]:
    """The page asked for: every filter in SQL, one grid per product, merged by issue date."""
    companies = {c.id: c.cnpj.value for c in desk.registered()}
    company_ids = (desk.company(args.company).id,) if args.company else ()
    product = parse_product(args.product)
    start, end = parse_day(args.date_from, "--from"), parse_day(args.date_to, "--to")
    if start and end and end < start:
        raise CapturaError("--to é anterior a --from.")
    kinds, events = _kinds(args.kind)
    base = GridFilter(
        Product.NFE,
        company_ids=company_ids,
        issued_from=start,
        issued_to=end,
        direction=Direction(args.direction) if args.direction else None,
        statuses=(DocumentStatus(args.status),) if args.status else (),
        emitter_id=_emitter(args.emitter),
    )
    grids = []
    for prod in [product] if product else list(Product):
        if not args.kind:
            grids.append(replace(base, product=prod))
            continue
        if kinds:
            grids.append(replace(base, product=prod, kinds=kinds))
        if events:
            grids.append(replace(base, product=prod, row_kinds=(RowKind.EVENT,)))
    wanted = args.offset + args.limit
    # Each stream holds its own first offset+limit, so the merged page is exact.
    streams = [_first(desk, grid, wanted) for grid in grids]
    merged = heapq.merge(*streams, key=_sort_key, reverse=True)
    return [(companies[row.company_id], row) for row in list(merged)[args.offset : wanted]]


def _list(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        rows = list_documents(desk, args)
    if args.json:
        print_json([document_json(row, company) for company, row in rows])
        return 0
    if not rows:
        print("Nenhum documento encontrado.")
        return 0
    # NFS-e: the service value (vServ) and, where taxes are withheld, the net value (vLiq).
    nets = any(row.net_cents is not None for _company, row in rows)
    net_header = f"{'Valor líquido':>16}  " if nets else ""
    header = f"{'Emissão':<16}  {'Tipo':<13}  {'NSU':>15}  {'Chave':<50}  {'Emitente':<40}  {'Valor':>16}  "
    print(header + net_header + "Situação")
    for _company, row in rows:
        local = labels.local_instant(row.issued_at, row.issued_offset_minutes)
        when = local.strftime("%d/%m/%Y %H:%M") if local else "-"
        emitter = f"{row.emitter_id or '-'} {(row.emitter_name or '')[:25]}".strip()
        kind = row.kind.value if row.kind is not None else EVENT_KIND
        situation = f"{row.event_count} evento(s)" if row.is_event_row else STATUS_LABELS[row.status]
        print(
            f"{when:<16}  {row.product.label + ' ' + kind:<13}  {_nsu(row.nsu) or '-':>15}  "
            f"{row.access_key or '-':<50}  {emitter[:40]:<40}  {money_br(row.total_cents):>16}  "
            + (f"{money_br(row.net_cents):>16}  " if nets else "")
            + situation
        )
    print(f"{len(rows)} documento(s).")
    return 0


# ---------------------------------------------------------------------------- one document


def _clean_key(text: str) -> str:
    problem = key_problem(text)  # a digit too many, a wrong check digit: said, not "não encontrado"
    if problem is not None:
        raise CapturaError(problem)
    key = "".join(ch for ch in text if not ch.isspace()).upper()
    if len(key) not in (44, 50) or not key.isalnum():
        raise CapturaError(f"Chave de acesso inválida: {text!r} (NF-e e CT-e: 44 caracteres; NFS-e: 50).")
    return key


def find_document(desk: Desk, key_text: str, company: str | None) -> tuple[str, GridRow]:
    """The one row with this key: a document, or the events of a key whose document never came
    (asks for ``--company`` when several companies hold it)."""
    key = _clean_key(key_text)
    company_ids = (desk.company(company).id,) if company else ()
    found = desk.find_key(key, company_ids)
    if not found:
        raise CapturaError(f"Documento com a chave {key} não encontrado.")
    cnpjs = {c.id: c.cnpj for c in desk.registered()}
    if len({row.company_id for row in found}) > 1:
        holders = ", ".join(cnpjs[row.company_id].formatted() for row in found)
        raise CapturaError(f"A chave {key} está em mais de uma empresa ({holders}): informe --company CNPJ.")
    row = found[0]
    return cnpjs[row.company_id].value, row


def _details(detail: DocumentDetail) -> dict[str, Any]:
    data = document_json(detail.row, detail.company_cnpj)
    data["company_name"] = detail.company_name
    data["ibs_cbs"] = None if detail.reform is None else asdict(detail.reform)  # centavos; items nested
    data["purpose"] = detail.purpose
    data["references"] = [r.access_key for r in detail.references]
    data["parties"] = [{"role": p.role.value, "id": p.tax_id, "name": p.name} for p in detail.parties]
    data["versions"] = [
        {
            "kind": v.kind.value,
            "nsu": _nsu(v.nsu),
            "schema": v.schema,
            "sha256": v.sha256,
            "size": v.size,
            "current": v.is_current,
            "received_at": _iso(v.received_at),
        }
        for v in detail.versions
    ]
    data["events"] = [
        {
            "tp_evento": e.tp_evento,
            "n_seq_evento": e.n_seq_evento,
            "description": e.description,
            "protocol": e.protocol,
            "cstat": e.cstat,
            "event_at": _iso(e.event_at),
            "author": e.author_id,
            "kind": e.kind.value,
            "nsu": _nsu(e.nsu),
        }
        for e in detail.events
    ]
    data["manifestations"] = [
        {
            "tp_evento": m.request.tp_evento,
            "label": m.label,
            "status": m.request.status.value,
            "status_label": labels.REFUSED_BEFORE_SENDING
            if m.refused_before_sending
            else MANIFESTATION_LABELS[m.request.status],
            "automatic": m.request.automatic,
            "cstat": m.request.cstat,
            "message": m.request.x_motivo,
            "protocol": m.request.protocol,
            "not_before": _iso(m.request.not_before),
            "sent_at": _iso(m.request.sent_at),
            "deadline": _iso(m.deadline),
            "attempts": m.attempts,
            "refused_before_sending": m.refused_before_sending,
        }
        for m in detail.manifestations
    ]
    # The CT-e that moved this NF-e, or the NF-e this CT-e carries.
    data["related"] = [
        {"product": r.product.value, "key": r.access_key, "stored": r.row is not None} for r in detail.related
    ]
    return data


def _print_details(data: dict[str, Any]) -> None:
    product = Product(data["product"])
    print(f"{product.label} {data['kind']}  chave {data['key']}")
    print(f"  Empresa:      {Cnpj.parse(data['company']).formatted()} {data['company_name']}")
    if data["kind"] == EVENT_KIND:
        print(f"  Documento não recebido por esta empresa: só os eventos da chave ({data['events_count']}).")
    else:
        print(f"  Emitente:     {data['issuer']['id'] or '-'} {data['issuer']['name'] or ''}")
        print(f"  Destinatário: {data['recipient']['id'] or '-'} {data['recipient']['name'] or ''}")
        number = f"{data['model'] or '-'}/{data['serie'] if data['serie'] is not None else '-'}/{data['number'] or '-'}"
        print(f"  Modelo/série/número: {number}   NSU {data['nsu'] or '-'}")
        value = f"Valor: {money_br(data['total_cents'])}"
        if data["net_cents"] is not None:  # NFS-e, named as the DANFSe names them
            value = f"Valor do serviço: {money_br(data['total_cents'])}   Valor líquido: {money_br(data['net_cents'])}"
        print(f"  Emissão: {data['issued_at'] or '-'}   {value}")
        situation = STATUS_LABELS[DocumentStatus(data["status"])]
        print(f"  Situação: {situation}   {DIRECTION_LABELS[Direction(data['direction'])]}")
    if data["parse_error"]:
        print(f"  Em quarentena: {data['parse_error']}")
    if data["versions"]:
        print("Versões:")
    for v in data["versions"]:
        mark = "*" if v["current"] else " "
        print(f"  {mark} {v['kind']:<14} NSU {v['nsu'] or '-':>15}  {v['size']:>7} bytes  sha256 {v['sha256']}")
    print("Eventos:" if data["events"] else "Eventos: nenhum")
    for e in data["events"]:
        print(
            f"  {e['tp_evento']} seq {e['n_seq_evento']}  {e['description'] or ''}  "
            f"protocolo {e['protocol'] or '-'}  cStat {e['cstat'] or '-'}  {e['event_at'] or ''}"
        )
    if data["related"]:
        print("NF-e transportadas:" if product is Product.CTE else "Transportada pelos CT-e:")
        for r in data["related"]:
            print(f"  {r['key']}" + ("" if r["stored"] else "  (não recebida por esta empresa)"))
    if product is Product.NFE and data["kind"] != EVENT_KIND:
        print("Manifestações:" if data["manifestations"] else "Manifestações: nenhuma")
        for m in data["manifestations"]:
            origin = "automática" if m["automatic"] else "manual"
            result = f"cStat {m['cstat']}: {m['message']}" if m["cstat"] else (m["message"] or "")
            print(f"  {m['label']} ({origin}): {m['status_label']}  {result}")
            attempts = f"  {m['attempts']}" if m["attempts"] else ""
            print(f"    protocolo {m['protocol'] or '-'}  prazo {m['deadline'] or '-'}{attempts}")


def _show(args: argparse.Namespace) -> int:
    with open_desk(args) as desk:
        _company, row = find_document(desk, args.key, args.company)
        data = _details(desk.detail(row))
    if args.json:
        print_json(data)
    else:
        _print_details(data)
    return 0


def write_output(target: str, content: bytes) -> None:
    """Write atomically (a temporary file renamed), or to standard output for ``-``."""
    if target == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
        return
    write_atomic(Path(target), content)


def _xml(args: argparse.Namespace) -> int:
    return _save(args, lambda desk, row: desk.xml(row), lambda _row: "XML")


def _pdf(args: argparse.Namespace) -> int:
    return _save(args, lambda desk, row: desk.pdf(row), lambda row: PDF_NAMES[row.product])


def _save(
    args: argparse.Namespace, content_of: Callable[[Desk, GridRow], bytes], name_of: Callable[[GridRow], str]
) -> int:
    """The document's bytes (its XML, its PDF) written to ``--output`` ("-": standard output)."""
    with open_desk(args) as desk:
        _company, row = find_document(desk, args.key, args.company)
        content = content_of(desk, row)
    write_output(args.output, content)
    if args.output != "-":
        print(f"{name_of(row)} gravado em {args.output} ({len(content)} bytes).")
    return 0


# ---------------------------------------------------------------------------- fetch by key


def _fetch(args: argparse.Namespace) -> int:
    from app.desk.fetching import CompanyChoiceNeeded

    with open_desk(args) as desk:
        company_id = desk.company(args.company).id if args.company else None
        try:
            result = desk.fetch_by_key(args.key, company_id)
        except CompanyChoiceNeeded as error:
            raise CapturaError(f"{error.message} Informe a empresa que consulta: --company CNPJ.") from None
        data = _details(desk.detail(result.row)) if result.row is not None else None
        product, key = result.product, result.key
    if result.status not in ("local", "fetched", "deferred"):
        raise CapturaError(result.message)
    available = _iso(result.available_at) if result.available_at else None
    if args.json:
        print_json(
            {"product": product.value, "key": key, "status": result.status, "message": result.message,
             "available_at": available, "document": data}
        )  # fmt: skip
        return 0 if data is not None else EXIT_WAITING
    print(result.message)
    if data is not None:
        _print_details(data)
        return 0
    return EXIT_WAITING
