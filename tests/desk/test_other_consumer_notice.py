"""The notification of another system consuming a company with the same certificate (issue 22).

The capture's "other_consumer" notice carries the clerk's sentence with the tally; told once a day
per company and product (the other system shows up hour after hour), and the 656 block it causes
is not told a second time as a plain block.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.capture.context import CaptureNotice
from app.core.cadence import Action
from app.core.clock import FakeClock
from app.core.other_consumer import OtherConsumerSummary
from app.core.products import Product
from app.desk.background import BackgroundState
from app.desk.notifications import OTHER_CONSUMER_TITLE, Level, NotificationPolicy
from app.desk.views import Alerts, CompanyLine, ProductBadge

T0 = datetime(2026, 12, 2, 13, 0, tzinfo=UTC)  # 10:00 in Brasília


def _summary(recovered: int = 0, pending: int = 25) -> OtherConsumerSummary:
    return OtherConsumerSummary(7, Product.NFE, T0, T0, 1, 25, recovered, pending, 0)


def _state(now: datetime, action: Action, reason: str) -> BackgroundState:
    badge = ProductBadge(Product.NFE, action, False, None, reason, "656", "Consumo", 0, 25, None, False)
    line = CompanyLine(7, "11222333000181", "DESTINATARIA LTDA", True, None, None, (badge,))
    return BackgroundState(now, (line,), Alerts(0, 0, 0), 0, 1, ())


def test_the_clerk_is_told_what_happened_and_what_to_do_once_a_day() -> None:
    clock = FakeClock(T0)
    policy = NotificationPolicy(clock.now, min_gap=timedelta(0), settle=timedelta(0))
    policy.observe(_state(T0, Action.WAIT, "Aguardando 1 hora."))
    text = _summary().text()
    assert text.startswith(
        "Outro sistema está consultando as NF-e desta empresa com o mesmo certificado (desde 02/12 10:00): "
        "0 documentos recuperados, 25 pendentes (até 20 por hora)."
    )
    assert "Mantenha um só sistema consultando" in text and "pastas de exportação" in text
    # The 656 blocks the company: that block is not told apart from the notice that explains it.
    blocked = f"SEFAZ bloqueou consultas até 11:01: outro sistema consulta as NF-e (cStat 656). {text}"
    policy.observe(_state(T0, Action.BLOCKED, blocked))
    policy.on_notice(CaptureNotice("other_consumer", 7, Product.NFE, text, 25))
    shown = policy.take()
    assert shown is not None and shown.title == OTHER_CONSUMER_TITLE and shown.level is Level.WARNING
    assert shown.text == f"DESTINATARIA LTDA: {text}"
    clock.advance(timedelta(hours=1))
    policy.on_notice(CaptureNotice("other_consumer", 7, Product.NFE, _summary(20, 5).text(), 5))
    assert policy.take() is None  # the same day: the Painel and the state keep the tally
    clock.advance(timedelta(days=1))
    policy.on_notice(CaptureNotice("other_consumer", 7, Product.NFE, _summary(25, 0).text(), 0))
    again = policy.take()
    assert again is not None and "25 documentos recuperados, 0 pendentes" in again.text
    # A CT-e sighting of the same company is news of its own.
    policy.on_notice(CaptureNotice("other_consumer", 7, Product.CTE, "Outro sistema está consultando as CT-e", 1))
    assert (cte := policy.take()) is not None and "CT-e" in cte.text


def test_a_plain_block_is_still_told() -> None:
    clock = FakeClock(T0)
    policy = NotificationPolicy(clock.now, min_gap=timedelta(0), settle=timedelta(0))
    policy.observe(_state(T0, Action.WAIT, "Aguardando 1 hora."))
    policy.observe(_state(T0, Action.BLOCKED, "Consultas suspensas até 11:01 após rejeição da SEFAZ (cStat 215)."))
    shown = policy.take()
    assert shown is not None and shown.title == "Consulta bloqueada"
