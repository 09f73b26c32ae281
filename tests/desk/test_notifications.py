"""The tray's notification policy and the desk's pause of every company, over a real data folder
filled by real capture from the sandbox; time is the harness's FakeClock."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from app.capture.context import CaptureNotice
from app.core.cadence import Action
from app.core.products import Product
from app.desk import Desk
from app.desk.notifications import Level, NotificationPolicy, next_query_text
from tests.desk.conftest import Office

PAUSED = "Captura pausada pelo usuário."


def _policy(desk: Desk, **options: object) -> NotificationPolicy:
    return NotificationPolicy(desk.now, **options)  # type: ignore[arg-type]


def _nfe_badge(desk: Desk):  # type: ignore[no-untyped-def]
    [line] = desk.companies()
    return next(b for b in line.badges if b.product is Product.NFE)


def test_pause_all_is_capture_state_in_the_badges_and_survives_a_restart(desk: Desk, office: Office) -> None:
    harness = office.harness
    company = harness.company.id
    assert _nfe_badge(desk).action is not Action.DISABLED
    captured = desk.background_state().captured
    assert captured >= 1 and desk.background_state().paused == 0

    assert desk.pause_all() == captured
    assert desk.pause_all() == 0  # already paused: nothing changes
    badge = _nfe_badge(desk)
    assert (badge.action, badge.reason, badge.next_query_at) == (Action.DISABLED, PAUSED, None)
    assert desk.background_state().all_paused
    harness.clock.advance(timedelta(hours=2))  # every wait over: only the pause holds the capture
    asked = harness.sandbox.referee.report()["requests"]
    harness.run_pending()
    assert harness.sandbox.referee.report()["requests"] == asked

    desk.close()  # a restart: a new desk over the same folder still shows the pause
    again = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    again.open()
    try:
        assert _nfe_badge(again).reason == PAUSED and again.background_state().all_paused
        assert next_query_text(again.background_state(), again.now()).startswith("Captura pausada")
        # A capture the cadence stopped while paused stays stopped: resuming all is not resuming it.
        cursors = harness.ctx.cursors
        cursors.save(replace(cursors.get(company, Product.NFE), disabled_reason="Cinco falhas seguidas."))
        assert again.resume_all() == captured
        state = cursors.get(company, Product.NFE)
        assert not state.paused and state.disabled_reason == "Cinco falhas seguidas."
        assert [(s.company_id, s.reason) for s in again.background_state().stopped] == [
            (company, "Cinco falhas seguidas.")
        ]
        cursors.save(replace(state, disabled_reason=None))
        badge = _nfe_badge(again)
        assert badge.action is not Action.DISABLED and badge.next_query_at is not None
        assert next_query_text(again.background_state(), again.now()).startswith("Próxima consulta: ")
    finally:
        again.close()


def test_new_documents_wait_for_their_burst_and_come_grouped_per_company(desk: Desk, office: Office) -> None:
    clock = office.harness.clock
    policy = _policy(desk, settle=timedelta(seconds=30))
    policy.observe(desk.background_state())  # learns the names
    policy.take()  # the first look's news (a cancellation) out of the way
    clock.advance(timedelta(minutes=5))
    company = office.harness.company.id
    policy.on_notice(CaptureNotice("documents", company, Product.NFE, "3 documento(s)", 3))
    policy.on_notice(CaptureNotice("documents", 999, Product.NFE, "1 documento(s)", 1))
    clock.advance(timedelta(seconds=10))
    policy.on_notice(CaptureNotice("documents", company, Product.CTE, "2 documento(s)", 2))
    assert policy.take() is None  # still settling: the rest of the burst may come
    clock.advance(timedelta(seconds=25))
    shown = policy.take()
    assert shown is not None and shown.title == "Novos documentos" and shown.level is Level.INFO
    assert shown.text == "6 documentos novos para 2 empresas: DESTINATARIA EXEMPLO LTDA (5), Empresa 999 (1)."


def test_at_most_one_notification_per_gap_with_everything_waiting_merged_urgent_first(
    desk: Desk, office: Office
) -> None:
    clock = office.harness.clock
    policy = _policy(desk, min_gap=timedelta(minutes=2), settle=timedelta(0))
    company = office.harness.company.id
    policy.observe(desk.background_state())
    policy.on_notice(CaptureNotice("documents", company, Product.NFE, "", 1))
    first = policy.take()
    assert first is not None and "NF-e cancelada" in first.title
    assert "1 NF-e cancelada(s) pelo emitente" in first.text and "1 documento novo." in first.text
    policy.on_notice(CaptureNotice("alert", company, Product.NFE, "Consulta travada: sem resposta há 6 min."))
    policy.on_notice(CaptureNotice("documents", company, Product.NFE, "", 4))
    policy.on_notice(CaptureNotice("manifestation", company, Product.NFE, "Ciência registrada"))
    clock.advance(timedelta(seconds=119))
    assert policy.take() is None  # rate-limited
    clock.advance(timedelta(seconds=1))
    second = policy.take()
    assert second is not None and second.title == "Atenção na captura e outros avisos"
    assert second.text.splitlines() == [
        "DESTINATARIA EXEMPLO LTDA: Consulta travada: sem resposta há 6 min.",
        "DESTINATARIA EXEMPLO LTDA: 4 documentos novos.",
    ]
    clock.advance(timedelta(minutes=10))
    assert policy.take() is None  # nothing new: nothing shown


def test_blocks_and_pauses_are_told_when_they_begin_not_when_found_at_start(desk: Desk, office: Office) -> None:
    harness, clock = office.harness, office.harness.clock
    cursors, company = harness.ctx.cursors, harness.company.id
    until = clock.now() + timedelta(hours=1)
    reason = "SEFAZ bloqueou consultas até 15:05: consumo indevido (cStat 656)."
    cursors.save(replace(cursors.get(company, Product.NFE), blocked_until=until, block_reason=reason))
    policy = _policy(desk, settle=timedelta(0), min_gap=timedelta(0))
    policy.observe(desk.background_state())
    first = policy.take()
    assert first is not None and "bloque" not in first.text  # at start: in the badges, not news
    state = cursors.get(company, Product.NFE)
    cursors.save(replace(state, blocked_until=None, block_reason=None))
    policy.observe(desk.background_state())
    assert policy.take() is None
    cursors.save(replace(state, blocked_until=until, block_reason=reason))
    policy.observe(desk.background_state())
    blocked = policy.take()
    assert blocked is not None and blocked.title == "Consulta bloqueada"
    assert blocked.text == f"DESTINATARIA EXEMPLO LTDA: {reason}"
    settings = harness.office.companies.get_settings(company, Product.NFE)
    assert settings is not None
    cursors.set_pause(Product.NFE, settings.environment, until, "Serviço paralisado", "108")
    policy.observe(desk.background_state())
    paused = policy.take()
    assert paused is not None and paused.title == "Serviço paralisado"
    assert "SEFAZ paralisada: consultas de todas as empresas pausadas até" in paused.text
    policy.observe(desk.background_state())
    assert policy.take() is None  # the same pause is not news twice


def test_certificate_warnings_at_30_15_7_and_1_days_and_on_expiry(desk: Desk, office: Office) -> None:
    clock = office.harness.clock
    [line] = desk.companies()
    expiry = line.certificate_not_after
    assert expiry is not None
    policy = _policy(desk, settle=timedelta(0), min_gap=timedelta(0))
    told = []
    for days_before in (45, 31, 30, 29, 20, 15, 8, 7, 2, 1, 0.5):
        clock.set(expiry - timedelta(days=days_before))
        policy.observe(desk.background_state())
        shown = policy.take()
        told.append(shown.text.splitlines()[0] if shown and "Certificado" in shown.title else None)
    clock.set(expiry + timedelta(minutes=1))
    policy.observe(desk.background_state())
    expired = policy.take()
    assert [t is not None for t in told] == [False, False, True, False, False, True, False, True, False, True, False]
    assert [t for t in told if t] == [
        f"DESTINATARIA EXEMPLO LTDA: o certificado vence em {days} ({expiry.astimezone(_brt()):%d/%m/%Y}): "
        "substitua-o para não parar."
        for days in ("30 dias", "15 dias", "7 dias")
    ] + [f"DESTINATARIA EXEMPLO LTDA: o certificado vence amanhã ({expiry.astimezone(_brt()):%d/%m/%Y}): "
         "substitua-o para não parar."]  # fmt: skip
    assert expired is not None and expired.title == "Certificado vencido" and expired.level is Level.CRITICAL
    assert "o certificado venceu em" in expired.text and "a captura está parada" in expired.text
    policy.observe(desk.background_state())
    assert policy.take() is None


def test_deadlines_are_told_once_a_day_and_when_more_come_due(desk: Desk, office: Office) -> None:
    clock = office.harness.clock
    clock.advance(timedelta(days=6))  # the received NF-e's 10-day Ciência deadline is 4 days away
    policy = _policy(desk, settle=timedelta(0), min_gap=timedelta(0))
    state = desk.background_state()
    assert state.alerts.deadlines_within_5_days == 2  # 3 received, 1 of them cancelled
    policy.observe(state)
    shown = policy.take()
    assert shown is not None and "2 NF-e com prazo de manifestação vencendo em até 5 dias." in shown.text
    clock.advance(timedelta(hours=1))
    policy.observe(desk.background_state())
    assert policy.take() is None
    clock.advance(timedelta(days=1))
    policy.observe(desk.background_state())
    again = policy.take()
    assert again is not None and again.title == "Prazo de manifestação"


def test_a_stopped_capture_is_told_once_and_again_if_it_stops_again(desk: Desk, office: Office) -> None:
    harness = office.harness
    cursors, company = harness.ctx.cursors, harness.company.id
    policy = _policy(desk, settle=timedelta(0), min_gap=timedelta(0))
    policy.observe(desk.background_state())
    policy.take()
    state = cursors.get(company, Product.NFE)
    why = "Captura interrompida após 5 falhas de comunicação seguidas."
    cursors.save(replace(state, disabled_reason=why))
    policy.observe(desk.background_state())
    stopped = policy.take()
    assert stopped is not None and stopped.title == "Captura parada" and stopped.level is Level.CRITICAL
    assert stopped.text == f"DESTINATARIA EXEMPLO LTDA: a captura de NF-e parou ({why}). Retome-a na janela."
    policy.observe(desk.background_state())
    assert policy.take() is None
    cursors.save(replace(state, disabled_reason=None))
    policy.observe(desk.background_state())
    cursors.save(replace(state, disabled_reason=why))
    policy.observe(desk.background_state())
    assert policy.take() is not None


def test_switched_off_it_tells_nothing(desk: Desk, office: Office) -> None:
    policy = _policy(desk, enabled=False, settle=timedelta(0), min_gap=timedelta(0))
    policy.observe(desk.background_state())
    policy.on_notice(CaptureNotice("documents", office.harness.company.id, Product.NFE, "", 3))
    assert policy.take() is None
    policy.enabled = True
    policy.on_notice(CaptureNotice("documents", office.harness.company.id, Product.NFE, "", 3))
    shown = policy.take()
    assert shown is not None and shown.text == "DESTINATARIA EXEMPLO LTDA: 3 documentos novos."


def _brt():  # type: ignore[no-untyped-def]
    from app.core.clock import BRASILIA

    return BRASILIA
