"""`manifest KEY EVENT`: a recipient manifestation of an NF-e, or a taker manifestation of an NFS-e,
queued and sent once if it may be.

Both go through the desk's one call (``Desk.manifest``), as the window's: every rule applies
(justification, sequence, the NT 2018.002 and seed-004 guards, rule book §4.5 and §6.5), a request
that cannot reach the service is refused without being recorded, and a registered conclusive
NF-e event is never sent again: ``--retificar`` asks, on purpose, for its one rectification. When a
capture service already runs for the data folder, the request is only queued: that service sends
it (never two senders).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli.args import UsageError
from app.cli.context import open_desk
from app.cli.exits import EXIT_OK, EXIT_WAITING
from app.cli.io import print_json
from app.core.clock import brasilia_iso
from app.core.errors import CapturaError
from app.core.keys import AccessKey, NfseKey
from app.core.manifestation import (
    CIENCIA,
    CONFIRMACAO,
    DESCONHECIMENTO,
    MANIFESTATION_TYPES,
    NAO_REALIZADA,
    manifestation_type,
)
from app.core.products import Product
from app.core.taker import CONFIRMACAO_TOMADOR, REJECTION_REASONS, REJEICAO_TOMADOR, TAKER_TYPES
from app.desk import labels
from app.desk.labels import MANIFESTATION_STATUS as MANIFESTATION_LABELS
from app.desk.views import ManifestationOutcome
from app.store.records import ManifestationStatus

if TYPE_CHECKING:  # the desk and the capture load when a command runs, never for `--help`
    from app.desk import Desk

EVENT_NAMES = {
    "confirmacao": CONFIRMACAO,
    "confirmação": CONFIRMACAO,
    "ciencia": CIENCIA,
    "ciência": CIENCIA,
    "desconhecimento": DESCONHECIMENTO,
    "nao-realizada": NAO_REALIZADA,
    "não-realizada": NAO_REALIZADA,
    "nao_realizada": NAO_REALIZADA,
    "confirmacao-tomador": CONFIRMACAO_TOMADOR,
    "confirmação-tomador": CONFIRMACAO_TOMADOR,
    "rejeicao-tomador": REJEICAO_TOMADOR,
    "rejeição-tomador": REJEICAO_TOMADOR,
}


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "manifest",
        help="manifestação do destinatário de uma NF-e (ciência, confirmação, desconhecimento, não realizada) "
        "ou do tomador de uma NFS-e (confirmação, rejeição)",
        description="Registra a manifestação e a envia uma vez, se as regras permitirem agora; "
        "se ficar pendente, o serviço de captura a envia depois.",
    )
    parser.add_argument("key", metavar="CHAVE", help="chave de acesso da NF-e (44 dígitos) ou da NFS-e (50)")
    parser.add_argument(
        "event",
        metavar="EVENTO",
        help="NF-e: 210200|confirmacao, 210210|ciencia, 210220|desconhecimento, 210240|nao-realizada; "
        "NFS-e: 203202|confirmacao-tomador, 203206|rejeicao-tomador",
    )
    parser.add_argument(
        "--reason",
        metavar="TEXTO",
        help="justificativa (obrigatória para não realizada) ou descrição do motivo da rejeição do tomador "
        "(15 a 255 caracteres)",
    )
    parser.add_argument(
        "--motivo",
        metavar="N",
        help="motivo da rejeição do tomador: " + ", ".join(f"{c} {t}" for c, t in REJECTION_REASONS.items()),
    )
    parser.add_argument(
        "--retificar",
        action="store_true",
        help="retifica a manifestação conclusiva já registrada da NF-e (permitida uma única vez; a última vale)",
    )
    parser.add_argument("--company", metavar="CNPJ", help="empresa destinatária (padrão: a que recebeu a nota)")
    parser.add_argument("--json", action="store_true", help="saída em JSON")
    parser.set_defaults(handler=_manifest)


def event_code(text: str) -> str:
    value = text.strip().lower()
    code = EVENT_NAMES.get(value, value)
    if code in TAKER_TYPES:
        return code
    try:
        manifestation_type(code)
    except CapturaError:  # a misuse of the command line (exit 2), with the valid events
        raise UsageError(f"Evento desconhecido: {text!r}. Eventos válidos: {valid_events()}.") from None
    return code


def valid_events() -> str:
    """ "210200 (confirmacao), 210210 (ciencia)...": each code with the first name that means it."""
    names: dict[str, str] = {}
    for name, code in EVENT_NAMES.items():
        names.setdefault(code, name)
    return ", ".join(
        f"{code} ({names[code]})" if code in names else code for code in sorted((*MANIFESTATION_TYPES, *TAKER_TYPES))
    )


def _company(desk: Desk, key: str, cnpj: str | None, product: Product = Product.NFE) -> int:
    if cnpj:
        return desk.company(cnpj).id
    holders = {row.company_id for row in desk.find_key(key) if row.product is product and not row.is_event_row}
    if len(holders) == 1:
        return holders.pop()
    if not holders:
        raise CapturaError(f"A {product.label} {key} não foi capturada por nenhuma empresa: informe --company CNPJ.")
    raise CapturaError(f"A {product.label} {key} está em mais de uma empresa: informe --company CNPJ.")


def _label(tp_evento: str) -> str:
    return TAKER_TYPES[tp_evento].label if tp_evento in TAKER_TYPES else manifestation_type(tp_evento).label


def _status(outcome: ManifestationOutcome) -> str:
    """accepted, rejected, pending or sent; "refused" when it never reached the service."""
    m = outcome.request
    return "refused" if outcome.refused or m is None else m.status.value


def _result_json(outcome: ManifestationOutcome) -> dict[str, Any]:
    m = outcome.request
    pending = m is not None and m.status is ManifestationStatus.PENDING
    return {
        "key": outcome.access_key,
        "tp_evento": outcome.tp_evento,
        "label": _label(outcome.tp_evento),
        "n_seq_evento": m.n_seq_evento if m else None,
        "status": _status(outcome),
        "status_label": MANIFESTATION_LABELS[m.status] if m and not outcome.refused else labels.REFUSED_BEFORE_SENDING,
        "refused_before_sending": outcome.refused,
        "cstat": m.cstat if m else None,
        "code": m.cstat if m else None,  # NFS-e: Sefin's code (E1833...)
        "message": outcome.message,
        "protocol": m.protocol if m else None,
        "next_attempt_at": brasilia_iso(m.not_before) if m and pending else None,
        "attempts": outcome.attempts,
        "queued_for_running_service": outcome.queued_elsewhere,
    }


def _manifest(args: argparse.Namespace) -> int:
    code = event_code(args.event)
    taker = code in TAKER_TYPES
    if args.motivo is not None and not taker:
        raise CapturaError("--motivo só se aplica à rejeição do tomador de uma NFS-e.")
    product = Product.NFSE if taker else Product.NFE
    key = (NfseKey.parse(args.key) if taker else AccessKey.parse(args.key)).value
    with open_desk(args) as desk:
        company_id = _company(desk, key, args.company, product)
        outcome = desk.manifest(
            company_id, key, code, justification=args.reason, reason_code=args.motivo, rectify=args.retificar
        )
    if args.json:
        print_json(_result_json(outcome))
    if outcome.accepted:
        if not args.json:
            print(outcome.message)
        return EXIT_OK
    if outcome.rectifiable:
        raise CapturaError(f"{outcome.message} Para retificar: manifest {key} {args.event} --retificar.")
    if not outcome.pending:
        raise CapturaError(outcome.message)
    if not args.json:
        print(outcome.message)
    return EXIT_WAITING
