"""`documents list | show | xml | pdf`: the captured documents, as stored, for scripts and people."""

from __future__ import annotations

import argparse
import contextlib
import heapq
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

from app.capture.context import CaptureContext
from app.capture.nfe_manifestation import NfeManifestationService
from app.capture.office import Office
from app.cli.context import capture_context, find_company, parse_product
from app.cli.io import print_json
from app.core.clock import BRASILIA
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.nsu import Nsu
from app.core.products import Product
from app.store.records import (
    Direction,
    DocumentKind,
    DocumentQuery,
    DocumentStatus,
    DocumentSummary,
    ManifestationStatus,
)

PAGE = 500
PDF_NAMES = {Product.NFE: "DANFE", Product.CTE: "DACTE", Product.NFSE: "DANFSe"}
DIRECTION_LABELS = {Direction.RECEIVED: "recebida", Direction.EMITTED: "emitida"}
STATUS_LABELS = {
    DocumentStatus.AUTHORISED: "autorizada",
    DocumentStatus.CANCELLED: "cancelada",
    DocumentStatus.DENIED: "denegada",
    DocumentStatus.SUMMARY: "resumo",
    DocumentStatus.UNKNOWN: "desconhecida",
}
MANIFESTATION_LABELS = {
    ManifestationStatus.PENDING: "pendente",
    ManifestationStatus.SENT: "enviada, aguardando resposta",
    ManifestationStatus.ACCEPTED: "registrada",
    ManifestationStatus.REJECTED: "rejeitada",
}


def register(sub: Any) -> None:
    group = sub.add_parser("documents", help="documentos capturados: lista, detalhes, XML e PDF")
    group.set_defaults(group_parser=group)
    actions = group.add_subparsers(dest="action", metavar="AÇÃO")

    listing = actions.add_parser("list", help="lista documentos com filtros (mais recentes primeiro)")
    listing.add_argument("--company", metavar="CNPJ", help="só esta empresa (padrão: todas)")
    listing.add_argument("--product", choices=[p.value for p in Product], help="só este produto")
    listing.add_argument(
        "--kind", help="tipos separados por vírgula: " + ", ".join(k.value for k in DocumentKind)
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

    xml = actions.add_parser("xml", help="grava o XML guardado, idêntico byte a byte ao recebido")
    xml.add_argument("key", metavar="CHAVE")
    xml.add_argument("-o", "--output", required=True, metavar="ARQUIVO", help="arquivo de saída ('-' = saída padrão)")
    xml.add_argument("--company", metavar="CNPJ", help="empresa (se a chave estiver em mais de uma)")
    xml.set_defaults(handler=_xml)

    pdf = actions.add_parser("pdf", help="DANFE, DACTE ou DANFSe do documento")
    pdf.add_argument("key", metavar="CHAVE")
    pdf.add_argument("-o", "--output", required=True, metavar="ARQUIVO", help="arquivo PDF de saída")
    pdf.add_argument("--company", metavar="CNPJ", help="empresa (se a chave estiver em mais de uma)")
    pdf.set_defaults(handler=_pdf)


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


def money(cents: int | None) -> str | None:
    """``"1234.56"``: a decimal string a script can parse without float rounding."""
    if cents is None:
        return None
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole}.{frac:02d}"


def money_br(cents: int | None) -> str:
    if cents is None:
        return "-"
    text = money(cents) or ""
    whole, frac = text.split(".")
    return f"R$ {int(whole):,}".replace(",", ".") + f",{frac}"


def issued_iso(doc: DocumentSummary) -> str | None:
    """The issue date with the offset the document was issued with (Brasília when unknown)."""
    if doc.issued_at is None:
        return None
    instant = doc.issued_at if doc.issued_at.tzinfo else doc.issued_at.replace(tzinfo=UTC)
    zone = timezone(timedelta(minutes=doc.issued_offset_minutes)) if doc.issued_offset_minutes is not None else BRASILIA
    return instant.astimezone(zone).isoformat()


def _nsu(value: int | None) -> str | None:
    return str(Nsu(value)) if value is not None else None


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(BRASILIA).isoformat() if value is not None else None


def document_json(doc: DocumentSummary, company_cnpj: str) -> dict[str, Any]:
    return {
        "company": company_cnpj,
        "product": doc.product.value,
        "kind": doc.kind.value,
        "nsu": _nsu(doc.nsu),
        "key": doc.access_key,
        "model": doc.model,
        "serie": doc.serie,
        "number": doc.number,
        "issuer": {"id": doc.emitter_id, "name": doc.emitter_name},
        "recipient": {"id": doc.recipient_id, "name": doc.recipient_name},
        "total": money(doc.total_cents),
        "total_cents": doc.total_cents,
        "issued_at": issued_iso(doc),
        "direction": doc.direction.value,
        "status": doc.status.value,
        "situation": doc.situation,
        "quarantined": doc.quarantined,
        "parse_error": doc.parse_error,
        "versions": doc.version_count,
    }


# ---------------------------------------------------------------------------- list


def _day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CapturaError(f"Data inválida em {option}: {text!r}. Use AAAA-MM-DD.") from None


def _brasilia_midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=BRASILIA).astimezone(UTC)


def _kinds(text: str | None) -> tuple[DocumentKind, ...]:
    if not text:
        return ()
    try:
        return tuple(DocumentKind(part.strip()) for part in text.split(",") if part.strip())
    except ValueError:
        known = ", ".join(k.value for k in DocumentKind)
        raise CapturaError(f"Tipo de documento desconhecido em {text!r}. Tipos: {known}.") from None


def _emitter(text: str | None) -> str | None:
    if text is None:
        return None
    value = "".join(ch for ch in text if ch.isalnum()).upper()
    if len(value) not in (11, 14):
        raise CapturaError(f"Emitente inválido: {text!r}. Informe um CNPJ ou CPF.")
    return value


def _sort_key(doc: DocumentSummary) -> tuple[bool, datetime, int]:
    # The store's order: issue date, newest first, with undated documents last.
    return (doc.issued_at is not None, doc.issued_at or datetime.min.replace(tzinfo=UTC), doc.id)


def _matching(ctx: CaptureContext, query: DocumentQuery, emitter: str | None, wanted: int) -> Iterator[DocumentSummary]:
    """The first ``wanted`` documents of one company and product, filtered by emitter if asked."""
    found = 0
    offset = 0
    while found < wanted:
        ids = ctx.documents.page_ids(query, offset, PAGE if emitter else wanted - found)
        if not ids:
            return
        offset += len(ids)
        for doc in ctx.documents.summaries(ids):
            if emitter is None or doc.emitter_id == emitter:
                found += 1
                yield doc
                if found >= wanted:
                    return


@dataclass(frozen=True, slots=True)
class Listed:
    company: str
    doc: DocumentSummary


def list_documents(office: Office, ctx: CaptureContext, args: argparse.Namespace) -> list[Listed]:
    companies = [find_company(office, args.company)] if args.company else office.companies.list_companies()
    product = parse_product(args.product)
    products = [product] if product else list(Product)
    start, end = _day(args.date_from, "--from"), _day(args.date_to, "--to")
    if start and end and end < start:
        raise CapturaError("--to é anterior a --from.")
    emitter = _emitter(args.emitter)
    wanted = args.offset + args.limit
    streams: list[list[Listed]] = []
    for company in companies:
        for prod in products:
            query = DocumentQuery(
                company_id=company.id,
                product=prod,
                issued_from=_brasilia_midnight(start) if start else None,
                issued_to=_brasilia_midnight(end + timedelta(days=1)) if end else None,
                direction=Direction(args.direction) if args.direction else None,
                kinds=_kinds(args.kind),
                status=DocumentStatus(args.status) if args.status else None,
            )
            streams.append([Listed(company.cnpj.value, d) for d in _matching(ctx, query, emitter, wanted)])
    # Each stream holds its own first offset+limit, so the merged page is exact.
    merged = heapq.merge(*streams, key=lambda item: _sort_key(item.doc), reverse=True)
    return list(merged)[args.offset : wanted]


def _list(args: argparse.Namespace) -> int:
    with capture_context(args) as (office, ctx):
        rows = list_documents(office, ctx, args)
    if args.json:
        print_json([document_json(row.doc, row.company) for row in rows])
        return 0
    if not rows:
        print("Nenhum documento encontrado.")
        return 0
    header = f"{'Emissão':<16}  {'Tipo':<13}  {'NSU':>15}  {'Chave':<50}  {'Emitente':<40}  {'Valor':>16}  Situação"
    print(header)
    for row in rows:
        doc = row.doc
        issued = issued_iso(doc)
        when = datetime.fromisoformat(issued).strftime("%d/%m/%Y %H:%M") if issued else "-"
        emitter = f"{doc.emitter_id or '-'} {(doc.emitter_name or '')[:25]}".strip()
        print(
            f"{when:<16}  {doc.product.label + ' ' + doc.kind.value:<13}  {_nsu(doc.nsu) or '-':>15}  "
            f"{doc.access_key or '-':<50}  {emitter[:40]:<40}  {money_br(doc.total_cents):>16}  "
            f"{STATUS_LABELS[doc.status]}"
        )
    print(f"{len(rows)} documento(s).")
    return 0


# ---------------------------------------------------------------------------- one document


def _clean_key(text: str) -> str:
    key = "".join(ch for ch in text if not ch.isspace())
    if len(key) not in (44, 50) or not key.isdigit():
        raise CapturaError(f"Chave de acesso inválida: {text!r} (NF-e e CT-e: 44 dígitos; NFS-e: 50).")
    return key


def find_document(office: Office, ctx: CaptureContext, key_text: str, company: str | None) -> Listed:
    """The one stored document with this key (asks for ``--company`` when several companies hold it)."""
    key = _clean_key(key_text)
    companies = [find_company(office, company)] if company else office.companies.list_companies()
    found = [
        Listed(c.cnpj.value, doc)
        for c in companies
        for product in Product
        if (doc := ctx.documents.find(c.id, product, key)) is not None
    ]
    if not found:
        raise CapturaError(f"Documento com a chave {key} não encontrado.")
    if len(found) > 1:
        holders = ", ".join(Cnpj.parse(item.company).formatted() for item in found)
        raise CapturaError(f"A chave {key} está em mais de uma empresa ({holders}): informe --company CNPJ.")
    return found[0]


def _details(office: Office, ctx: CaptureContext, item: Listed) -> dict[str, Any]:
    doc = item.doc
    company = office.companies.get(doc.company_id)
    data = document_json(doc, item.company)
    data["company_name"] = company.name
    data["parties"] = [
        {"role": p.role.value, "id": p.tax_id, "name": p.name} for p in ctx.documents.parties(doc.id)
    ]
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
        for v in ctx.documents.versions(doc.id)
    ]
    key = doc.access_key or ""
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
        for e in (ctx.events.for_key(doc.company_id, doc.product, key) if key else [])
    ]
    views = NfeManifestationService(ctx).view(doc.company_id, key) if key and doc.product is Product.NFE else []
    data["manifestations"] = [
        {
            "tp_evento": v.request.tp_evento,
            "label": v.label,
            "status": v.request.status.value,
            "status_label": MANIFESTATION_LABELS[v.request.status],
            "automatic": v.request.automatic,
            "cstat": v.request.cstat,
            "message": v.request.x_motivo,
            "protocol": v.request.protocol,
            "not_before": _iso(v.request.not_before),
            "sent_at": _iso(v.request.sent_at),
            "deadline": _iso(v.deadline),
            "attempts": v.attempts.text,
        }
        for v in views
    ]
    return data


def _print_details(data: dict[str, Any]) -> None:
    product = Product(data["product"])
    print(f"{product.label} {data['kind']}  chave {data['key']}")
    print(f"  Empresa:      {Cnpj.parse(data['company']).formatted()} {data['company_name']}")
    print(f"  Emitente:     {data['issuer']['id'] or '-'} {data['issuer']['name'] or ''}")
    print(f"  Destinatário: {data['recipient']['id'] or '-'} {data['recipient']['name'] or ''}")
    number = f"{data['model'] or '-'}/{data['serie'] if data['serie'] is not None else '-'}/{data['number'] or '-'}"
    print(f"  Modelo/série/número: {number}   NSU {data['nsu'] or '-'}")
    cents = data["total_cents"]
    print(f"  Emissão: {data['issued_at'] or '-'}   Valor: {money_br(cents)}")
    situation = STATUS_LABELS[DocumentStatus(data["status"])]
    detail = data["situation"] if data["situation"] and not str(data["situation"]).isdigit() else ""
    print(f"  Situação: {situation}   {DIRECTION_LABELS[Direction(data['direction'])]}   {detail}".rstrip())
    if data["parse_error"]:
        print(f"  Em quarentena: {data['parse_error']}")
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
    if product is Product.NFE:
        print("Manifestações:" if data["manifestations"] else "Manifestações: nenhuma")
        for m in data["manifestations"]:
            origin = "automática" if m["automatic"] else "manual"
            result = f"cStat {m['cstat']}: {m['message']}" if m["cstat"] else (m["message"] or "")
            print(f"  {m['label']} ({origin}): {m['status_label']}  {result}")
            print(f"    protocolo {m['protocol'] or '-'}  prazo {m['deadline'] or '-'}  {m['attempts']}")


def _show(args: argparse.Namespace) -> int:
    with capture_context(args) as (office, ctx):
        item = find_document(office, ctx, args.key, args.company)
        data = _details(office, ctx, item)
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
    path = Path(target)
    folder = path.parent if str(path.parent) else Path(".")
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        os.replace(tmp, path)
        tmp = None
    except OSError as error:
        raise CapturaError(f"Não foi possível gravar {path}: {error.strerror or error}.") from error
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _xml(args: argparse.Namespace) -> int:
    with capture_context(args) as (office, ctx):
        item = find_document(office, ctx, args.key, args.company)
        content = ctx.documents.get_document_xml(item.doc.id)
    write_output(args.output, content)
    if args.output != "-":
        print(f"XML gravado em {args.output} ({len(content)} bytes).")
    return 0


def _pdf(args: argparse.Namespace) -> int:
    with capture_context(args) as (office, ctx):
        item = find_document(office, ctx, args.key, args.company)
    name = PDF_NAMES[item.doc.product]
    # No renderer yet: say so rather than write a placeholder that looks like a document.
    raise CapturaError(f"{name} ainda não disponível nesta versão: use `documents xml` para obter o XML.")
