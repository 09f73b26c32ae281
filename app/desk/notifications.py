"""Which capture news becomes a notification, grouped and rate-limited: pure Python, no Qt.

Fed two ways: the capture's notices as they happen (``on_notice``: documents arrived, alerts)
and the desk's periodic look (``observe`` a ``BackgroundState``: blocks and pauses that began,
certificates near expiry, manifestation deadlines, cancellations after capture, stopped
captures). ``take`` hands out at most one notification per ``min_gap``, holding news of new
documents for ``settle`` so that a burst of runs becomes one message; whatever waits is merged
into that one message, the most urgent first. Time is the desk's clock (``now``).

Not thread-safe: the window feeds it from the GUI thread (notices arrive there as signals).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum
from typing import TYPE_CHECKING

from app.core.cadence import Action, display_time
from app.core.clock import to_brasilia
from app.core.other_consumer import OTHER_CONSUMER_TEXT
from app.core.products import Product
from app.desk.background import BackgroundState

if TYPE_CHECKING:
    from app.capture.context import CaptureNotice

ENABLED_BY_DEFAULT = True  # the settings' "notifications" switch
MIN_GAP = timedelta(minutes=2)  # between two notifications
SETTLE = timedelta(seconds=30)  # new documents wait this long for the rest of their burst
CERTIFICATE_DAYS = (30, 15, 7, 1)  # warnings before expiry (and one on it)
MAX_LINES = 4  # what a tray balloon shows readably
MAX_NAMES = 3
OTHER_CONSUMER = "other_consumer"  # the capture's notice kind (app.capture.other_consumer)
OTHER_CONSUMER_TITLE = "Outro sistema usando o certificado"


class Level(IntEnum):
    INFO = 0
    WARNING = 1
    CRITICAL = 2


@dataclass(frozen=True, slots=True)
class Notification:
    """One message for the tray balloon (or the status bar): a title and a few lines."""

    title: str
    text: str
    level: Level


@dataclass(frozen=True, slots=True)
class _Item:
    level: Level
    title: str
    line: str
    at: datetime


class NotificationPolicy:
    """Decides what to tell and when; ``enabled`` False drops everything (the settings switch)."""

    def __init__(
        self,
        now: Callable[[], datetime],
        *,
        enabled: bool = ENABLED_BY_DEFAULT,
        min_gap: timedelta = MIN_GAP,
        settle: timedelta = SETTLE,
    ) -> None:
        self._now = now
        self.enabled = enabled
        self.min_gap = min_gap
        self.settle = settle
        self._names: dict[int, str] = {}
        self._documents: dict[int, int] = {}  # company -> new documents not told yet
        self._documents_since: datetime | None = None
        self._items: list[_Item] = []
        self._last_shown: datetime | None = None
        self._seen: BackgroundState | None = None
        self._told: set[tuple[object, ...]] = set()  # state-derived news already told

    # ------------------------------------------------------------------ feeding

    def on_notice(self, notice: CaptureNotice) -> None:
        if not self.enabled:
            return
        now = self._now()
        if notice.kind == "documents" and notice.company_id is not None and notice.count > 0:
            self._documents[notice.company_id] = self._documents.get(notice.company_id, 0) + notice.count
            self._documents_since = self._documents_since or now
        elif notice.kind == "alert":
            who = self._name(notice.company_id) if notice.company_id is not None else "Captura"
            self._add(Level.WARNING, "Atenção na captura", f"{who}: {notice.message}", now)
        elif notice.kind == OTHER_CONSUMER and notice.company_id is not None:
            # Another system consuming the company (issue 22) shows up hour after hour: told once
            # a day per company and product; the Painel and the company's state keep the tally.
            key = ("other_consumer", notice.company_id, notice.product, to_brasilia(now).date())
            if key not in self._told:
                self._told.add(key)
                self._add(
                    Level.WARNING, OTHER_CONSUMER_TITLE, f"{self._name(notice.company_id)}: {notice.message}", now
                )

    def observe(self, state: BackgroundState) -> None:
        """Compare with the previous look: what began since becomes news (the first look tells
        only what needs someone: certificates, deadlines, cancellations, stopped captures)."""
        self._names = {line.company_id: line.name for line in state.companies}
        previous, self._seen = self._seen, state
        if not self.enabled:
            return
        self._blocks_and_pauses(previous, state)
        self._certificates(state)
        self._stopped(state)
        self._alerts(previous, state)

    def _blocks_and_pauses(self, previous: BackgroundState | None, state: BackgroundState) -> None:
        if previous is None:
            return  # a block already in force when the app starts is in the badges, not news
        before = {
            (line.company_id, badge.product): badge.action for line in previous.companies for badge in line.badges
        }
        paused_products: set[Product] = set()
        for line in state.companies:
            for badge in line.badges:
                was = before.get((line.company_id, badge.product))
                if badge.action is Action.BLOCKED and was is not Action.BLOCKED:
                    if OTHER_CONSUMER_TEXT in badge.reason:
                        continue  # another system's 656: its own notice says it all, with the tally
                    self._add(Level.WARNING, "Consulta bloqueada", f"{line.name}: {badge.reason}", state.now)
                elif badge.action is Action.PAUSED and was is not Action.PAUSED:
                    if badge.product in paused_products:
                        continue
                    paused_products.add(badge.product)  # a service's pause concerns every company: told once
                    self._add(Level.WARNING, "Serviço paralisado", badge.reason, state.now)

    def _certificates(self, state: BackgroundState) -> None:
        for line in state.companies:
            expiry = line.certificate_not_after
            if expiry is None:
                continue
            left = expiry - state.now
            if left <= timedelta(0):
                mark: int = 0
                text = f"o certificado venceu em {to_brasilia(expiry):%d/%m/%Y}: a captura está parada."
                level = Level.CRITICAL
            else:
                days = -(-left // timedelta(days=1))  # whole days, rounded up
                due = [d for d in CERTIFICATE_DAYS if days <= d]
                if not due:
                    continue
                mark = min(due)
                when = "amanhã" if days == 1 else f"em {days} dias"
                text = f"o certificado vence {when} ({to_brasilia(expiry):%d/%m/%Y}): substitua-o para não parar."
                level = Level.WARNING if mark > 1 else Level.CRITICAL
            key = ("certificate", line.company_id, expiry, mark)
            if key not in self._told:
                self._told.add(key)
                title = "Certificado vencendo" if mark else "Certificado vencido"
                self._add(level, title, f"{line.name}: {text}", state.now)

    def _stopped(self, state: BackgroundState) -> None:
        current = {("stopped", s.company_id, s.product, s.reason) for s in state.stopped}
        for stop in state.stopped:
            key = ("stopped", stop.company_id, stop.product, stop.reason)
            if key not in self._told:
                who, product = self._name(stop.company_id), stop.product.label
                line = f"{who}: a captura de {product} parou ({stop.reason}). Retome-a na janela."
                self._add(Level.CRITICAL, "Captura parada", line, state.now)
        # a resumed capture that stops again is news again
        self._told = {k for k in self._told if k[0] != "stopped"} | current

    def _alerts(self, previous: BackgroundState | None, state: BackgroundState) -> None:
        alerts, now = state.alerts, state.now
        was = previous.alerts if previous is not None else None
        if alerts.cancelled_after_capture > (was.cancelled_after_capture if was else 0):
            count = alerts.cancelled_after_capture - (was.cancelled_after_capture if was else 0)
            line = f"{count} NF-e cancelada(s) pelo emitente depois de capturada(s): confira antes de escriturar."
            self._add(Level.WARNING, "NF-e cancelada", line, now)
        day = to_brasilia(now).date()
        key = ("deadlines", day)
        grew = was is not None and alerts.deadlines_within_5_days > was.deadlines_within_5_days
        if alerts.deadlines_within_5_days and (key not in self._told or grew):
            self._told.add(key)
            line = f"{alerts.deadlines_within_5_days} NF-e com prazo de manifestação vencendo em até 5 dias."
            self._add(Level.WARNING, "Prazo de manifestação", line, now)

    # ------------------------------------------------------------------ telling

    def take(self) -> Notification | None:
        """The notification to show now, if any may be shown (one per ``min_gap``)."""
        if not self.enabled:
            self._items.clear()
            self._documents.clear()
            return None
        now = self._now()
        if self._last_shown is not None and now - self._last_shown < self.min_gap:
            return None
        self._gather_documents(now)
        if not self._items:
            return None
        items = sorted(self._items, key=lambda item: (-item.level, item.at))
        self._items.clear()
        self._last_shown = now
        lines = [item.line for item in items[:MAX_LINES]]
        if len(items) > MAX_LINES:
            lines.append(f"… e mais {len(items) - MAX_LINES} aviso(s): veja a janela.")
        title = items[0].title if len({i.title for i in items}) == 1 else f"{items[0].title} e outros avisos"
        return Notification(title, "\n".join(lines), items[0].level)

    def _gather_documents(self, now: datetime) -> None:
        since = self._documents_since
        if since is None or now - since < self.settle:
            return
        counts = sorted(self._documents.items(), key=lambda kv: (-kv[1], self._name(kv[0])))
        self._documents.clear()
        self._documents_since = None
        total = sum(count for _company, count in counts)
        if len(counts) == 1:
            line = f"{self._name(counts[0][0])}: {_documents(total)}."
        else:
            names = ", ".join(f"{self._name(c)} ({n})" for c, n in counts[:MAX_NAMES])
            rest = f" e mais {len(counts) - MAX_NAMES} empresa(s)" if len(counts) > MAX_NAMES else ""
            line = f"{_documents(total)} para {len(counts)} empresas: {names}{rest}."
        self._items.append(_Item(Level.INFO, "Novos documentos", line, since))

    def _add(self, level: Level, title: str, line: str, at: datetime) -> None:
        self._items.append(_Item(level, title, line, at))

    def _name(self, company_id: int | None) -> str:
        if company_id is None:
            return "Captura"
        return self._names.get(company_id, f"Empresa {company_id}")


def _documents(count: int) -> str:
    return "1 documento novo" if count == 1 else f"{count} documentos novos"


def next_query_text(state: BackgroundState | None, now: datetime) -> str:
    """The tray menu's line about the next query."""
    if state is None:
        return "Abrindo a pasta de dados…"
    if state.all_paused:
        return "Captura pausada: nenhuma consulta até retomar"
    found = state.next_query()
    if found is None:
        return "Nenhuma consulta agendada"
    when, line, product = found
    if when <= now:
        return f"Próxima consulta: agora ({line.name}, {product.label})"
    return f"Próxima consulta: {display_time(when, now)} ({line.name}, {product.label})"
