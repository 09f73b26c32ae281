"""`manifest KEY EVENT`: a recipient manifestation of an NF-e, queued and sent once if it may be.

The request goes through the same service as the window (``NfeManifestationService``): every
rule (justification, sequence, the NT 2018.002 guard) applies. When a capture service already
runs for the data folder, the request is only queued: that service sends it (never two senders).
"""

from __future__ import annotations

import argparse
from typing import Any

from app.capture.context import CaptureContext
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.nfe_manifestation import NfeManifestationService
from app.capture.office import Office
from app.cli.context import capture_context, find_company
from app.cli.documents import MANIFESTATION_LABELS
from app.cli.io import print_json
from app.cli.main import EXIT_WAITING
from app.core.clock import BRASILIA
from app.core.errors import CapturaError
from app.core.keys import AccessKey
from app.core.manifestation import CIENCIA, CONFIRMACAO, DESCONHECIMENTO, NAO_REALIZADA, manifestation_type
from app.core.products import Product
from app.store.records import Company, Manifestation, ManifestationStatus

EVENT_NAMES = {
    "confirmacao": CONFIRMACAO,
    "confirmação": CONFIRMACAO,
    "ciencia": CIENCIA,
    "ciência": CIENCIA,
    "desconhecimento": DESCONHECIMENTO,
    "nao-realizada": NAO_REALIZADA,
    "não-realizada": NAO_REALIZADA,
    "nao_realizada": NAO_REALIZADA,
}


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "manifest",
        help="manifestação do destinatário de uma NF-e (ciência, confirmação, desconhecimento, não realizada)",
        description="Registra a manifestação e a envia uma vez, se as regras permitirem agora; "
        "se ficar pendente, o serviço de captura a envia depois.",
    )
    parser.add_argument("key", metavar="CHAVE", help="chave de acesso da NF-e (44 dígitos)")
    parser.add_argument(
        "event",
        metavar="EVENTO",
        help="210200|confirmacao, 210210|ciencia, 210220|desconhecimento, 210240|nao-realizada",
    )
    parser.add_argument("--reason", metavar="TEXTO", help="justificativa (obrigatória para não realizada)")
    parser.add_argument("--company", metavar="CNPJ", help="empresa destinatária (padrão: a que recebeu a nota)")
    parser.add_argument("--json", action="store_true", help="saída em JSON")
    parser.set_defaults(handler=_manifest)


def event_code(text: str) -> str:
    value = text.strip().lower()
    code = EVENT_NAMES.get(value, value)
    manifestation_type(code)  # raises with the PT message for an unknown type
    return code


def _company(office: Office, ctx: CaptureContext, key: str, cnpj: str | None) -> Company:
    if cnpj:
        return find_company(office, cnpj)
    holders = [c for c in office.companies.list_companies() if ctx.documents.find(c.id, Product.NFE, key)]
    if len(holders) == 1:
        return holders[0]
    if not holders:
        raise CapturaError(f"A NF-e {key} não foi capturada por nenhuma empresa: informe --company CNPJ.")
    raise CapturaError(f"A NF-e {key} está em mais de uma empresa: informe --company CNPJ.")


def _result_json(m: Manifestation, label: str, attempts: str) -> dict[str, Any]:
    return {
        "key": m.access_key,
        "tp_evento": m.tp_evento,
        "label": label,
        "n_seq_evento": m.n_seq_evento,
        "status": m.status.value,
        "status_label": MANIFESTATION_LABELS[m.status],
        "cstat": m.cstat,
        "message": m.x_motivo,
        "protocol": m.protocol,
        "next_attempt_at": m.not_before.astimezone(BRASILIA).isoformat()
        if m.status is ManifestationStatus.PENDING
        else None,
        "attempts": attempts,
    }


def _manifest(args: argparse.Namespace) -> int:
    code = event_code(args.event)
    key = AccessKey.parse(args.key).value
    with capture_context(args) as (office, ctx):
        company = _company(office, ctx, key, args.company)
        service = NfeManifestationService(ctx)
        request = service.request(company.id, key, code, args.reason)
        queued_only = False
        try:
            with DataFolderLock(office.data_dir):
                if request.status is ManifestationStatus.PENDING:
                    service.dispatch()
        except AlreadyRunning:
            queued_only = True  # the running service sends it; two senders could send it twice
        final = next(m for m in ctx.manifestations.for_key(company.id, Product.NFE, key) if m.id == request.id)
        view = next((v for v in service.view(company.id, key) if v.request.id == request.id), None)
        attempts = view.attempts.text if view else ""
    label = manifestation_type(code).label
    data = _result_json(final, label, attempts)
    data["queued_for_running_service"] = queued_only
    if args.json:
        print_json(data)
    if final.status is ManifestationStatus.ACCEPTED:
        if not args.json:
            print(f"{label} registrada: protocolo {final.protocol or '-'} (cStat {final.cstat}: {final.x_motivo}).")
        return 0
    if final.status is ManifestationStatus.REJECTED:
        raise CapturaError(f"{label} rejeitada: {final.x_motivo or 'sem motivo informado'} ({attempts}).")
    if not args.json:
        where = "o serviço de captura em execução a enviará" if queued_only else "será enviada pelo serviço de captura"
        detail = f" Último resultado: {final.x_motivo}." if final.x_motivo else ""
        print(f"{label} pendente: {where}.{detail}")
    return EXIT_WAITING
