"""Every Portuguese word the window and the command line show for a stored value, in one place.

Values stay raw everywhere else (a grid sorts and colours on enums, not on these words).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from app.core.cadence import ACTION_LABELS, CONSULTANDO, Action
from app.core.clock import BRASILIA
from app.core.documents import DIRECTION_LABELS, STATUS_LABELS
from app.core.ids import Cnpj, Cpf
from app.core.manifestation import CIENCIA, MANIFESTATION_TYPES, ManifestationState, PendingDeadline
from app.core.products import Product
from app.store.records import ManifestationStatus, RowKind

DIRECTION = DIRECTION_LABELS
STATUS = STATUS_LABELS
ROW_KIND = {
    RowKind.SUMMARY: "resumo",
    RowKind.COMPLETE: "completa",
    RowKind.EVENT: "evento",
    RowKind.UNREADABLE: "ilegível",
}
MANIFESTATION_STATUS = {
    ManifestationStatus.PENDING: "pendente",
    ManifestationStatus.SENT: "enviada, aguardando resposta",
    ManifestationStatus.ACCEPTED: "registrada",
    ManifestationStatus.REJECTED: "rejeitada",
}
REFUSED_BEFORE_SENDING = "não enviada"
MANIFESTATION_STATE = {
    ManifestationState.NONE: "sem manifestação",
    ManifestationState.REQUESTED: "solicitada",
    ManifestationState.CIENCIA: "ciência",
    ManifestationState.CONFIRMED: "confirmada",
    ManifestationState.UNKNOWN_OPERATION: "desconhecida",
    ManifestationState.NOT_PERFORMED: "não realizada",
}
ACTION = ACTION_LABELS  # the words `status` prints
CAPTURING = CONSULTANDO
PDF_NAMES = {Product.NFE: "DANFE", Product.CTE: "DACTE", Product.NFSE: "DANFSe"}
SUMMARY_PDF = "PDF do resumo"  # a resNFe's page says it is not a DANFE: neither does its button


def answer_message(cstat: str, message: str | None) -> str:
    """A service's answer without its code: the ADN's messages carry it already ("E2220: ..."),
    the SEFAZ's do not; shown beside the code, it would read twice."""
    text = message or ""
    if text.startswith(cstat):
        text = text[len(cstat) :].lstrip(" :—-")
    return text


def answer_text(cstat: str, message: str | None) -> str:
    """ "E2220 — mensagem", the code once."""
    text = answer_message(cstat, message)
    return f"{cstat} — {text}" if text else cstat


def pdf_name(product: Product, row_kind: RowKind | None) -> str:
    """What a row's PDF is: "DANFE", "DACTE", "DANFSe", or the resumo's page."""
    return SUMMARY_PDF if row_kind is RowKind.SUMMARY else PDF_NAMES[product]


def manifestation_label(tp_evento: str) -> str:
    kind = MANIFESTATION_TYPES.get(tp_evento)
    return kind.label if kind else tp_evento


def money(cents: int | None) -> str | None:
    """``"1234.56"``: a decimal string a script can parse without float rounding."""
    if cents is None:
        return None
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole}.{frac:02d}"


def money_br(cents: int | None) -> str:
    """``R$ 1.234,56`` (``-`` when unknown)."""
    if cents is None:
        return "-"
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}R$ {whole:,}".replace(",", ".") + f",{frac:02d}"


def tax_id(value: str | None) -> str:
    """A CNPJ or CPF with its punctuation; anything else as it came (a foreign id), ``-`` if none."""
    if not value:
        return "-"
    try:
        if len(value) == 14:
            return Cnpj.parse(value).formatted()
        if len(value) == 11:
            return Cpf.parse(value).formatted()
    except ValueError:
        pass
    return value


def local_instant(instant: datetime | None, offset_minutes: int | None = None) -> datetime | None:
    """The instant in the zone it was issued in (Brasília when unknown)."""
    if instant is None:
        return None
    aware = instant if instant.tzinfo else instant.replace(tzinfo=UTC)
    zone = timezone(timedelta(minutes=offset_minutes)) if offset_minutes is not None else BRASILIA
    return aware.astimezone(zone)


def issued_iso(instant: datetime | None, offset_minutes: int | None) -> str | None:
    local = local_instant(instant, offset_minutes)
    return local.replace(microsecond=0).isoformat() if local else None  # a person reads seconds at most


def brasilia_text(instant: datetime | None, with_seconds: bool = False) -> str:
    if instant is None:
        return "-"
    return instant.astimezone(BRASILIA).strftime("%d/%m/%Y %H:%M:%S" if with_seconds else "%d/%m/%Y %H:%M")


def hour_text(instant: datetime | None, now: datetime) -> str:
    """``14:05`` today, ``02/12 14:05`` another day (Brasília)."""
    if instant is None:
        return "-"
    local, today = instant.astimezone(BRASILIA), now.astimezone(BRASILIA)
    return local.strftime("%H:%M") if local.date() == today.date() else local.strftime("%d/%m %H:%M")


def deadline_text(pending: PendingDeadline | None, now: datetime) -> str:
    """``Ciência: 3 dias``; ``Confirmação: vence hoje``; ``Ciência: vencido``."""
    if pending is None:
        return ""
    kind = "Ciência" if pending.tp_evento == CIENCIA else "Conclusiva"
    days = pending.days_left(now)
    if pending.due < now:
        return f"{kind}: prazo vencido"
    if days == 0:
        return f"{kind}: vence hoje"
    return f"{kind}: {days} dia{'s' if days != 1 else ''}"


def badge_text(action: Action, capturing: bool, until: datetime | None, now: datetime) -> str:
    """The company list's short state: ``Consultando``, ``Em espera até 14:05``, ``Bloqueada até 15:00``."""
    if capturing:
        return CAPTURING
    label = ACTION[action]
    if action is Action.QUERY:
        return "Aguardando consulta"
    if until is not None and action in (Action.WAIT, Action.BLOCKED, Action.PAUSED):
        return f"{label} até {hour_text(until, now)}"
    return label


def certificate_text(not_after: datetime | None, problem: str | None, now: datetime) -> str | None:
    """A warning when the certificate needs attention (30 days or less), else None."""
    if problem:
        return problem
    if not_after is None:
        return None
    days = (not_after - now).days
    if days < 0:
        return f"Certificado vencido em {brasilia_text(not_after)[:10]}"
    if days <= 30:
        return "Certificado vence hoje" if days == 0 else f"Certificado vence em {days} dia{'s' if days != 1 else ''}"
    return None
