"""The company dialog and the capture dashboard, driven as a clerk would (offscreen, real
certificates from the sandbox's ICP-Brasil test authority, a real capture over mutual TLS)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.cadence import Action
from app.core.products import Product
from app.desk import Desk
from app.ui.company_dialog import CompanyDialog
from app.ui.main_window import MainWindow
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT

NEW_CNPJ = "55666777000181"
BRANCH = "55666777000262"
OTHER_ROOT = "99000111000165"


def _window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> MainWindow:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.company_list.count() > 1, timeout=20_000)
    return window


@pytest.fixture
def capturing(office: Office) -> Iterator[Desk]:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, owner="teste")
    try:
        yield desk
    finally:
        desk.close()


def _dialog(window: MainWindow, qtbot: QtBot, company_id: int | None = None) -> CompanyDialog:
    window.company_actions.open_company(company_id)
    dialog = window.company_actions.last_dialog
    assert isinstance(dialog, CompanyDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _check(dialog: CompanyDialog, qtbot: QtBot, path: Path, pfx: bytes, password: str) -> str:
    path.write_bytes(pfx)
    dialog.path.setText(str(path))
    dialog.password.setText(password)
    before = dialog.certificate.text()
    dialog.check_certificate()
    qtbot.waitUntil(lambda: dialog.check.isEnabled() and dialog.certificate.text() != "Conferindo o certificado…")
    assert dialog.certificate.text() != before
    return dialog.certificate.text()


def test_adding_a_company_checks_the_certificate_and_names_each_problem(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    sandbox, now = office.harness.sandbox, desk.now()
    dialog = _dialog(window, qtbot)
    good = sandbox.company(NEW_CNPJ, "NOVA CLIENTE COMERCIO LTDA")
    problems = {
        "Senha do certificado incorreta": (good.pfx, "senha-errada"),
        "Certificado vencido em": (
            sandbox.company(NEW_CNPJ, "NOVA", not_after=now - timedelta(days=3)).pfx,
            good.password,
        ),
        "ainda não é válido": (
            sandbox.company(NEW_CNPJ, "NOVA", not_before=now + timedelta(days=3)).pfx,
            good.password,
        ),
        "não é um e-CNPJ ICP-Brasil": (
            sandbox.company(NEW_CNPJ, "NOVA", include_cnpj_oid=False, cn_style=False).pfx,
            good.password,
        ),
    }
    for expected, (pfx, password) in problems.items():
        text = _check(dialog, qtbot, tmp_path / "cert.pfx", pfx, password)
        assert expected in text, text
        assert dialog.preview is None
    # Saving without a good certificate is refused, saying why.
    dialog.save()
    assert "Confira o certificado" in dialog.message.text()
    text = _check(dialog, qtbot, tmp_path / "cert.pfx", good.pfx, good.password)
    assert "55.666.777/0001-81" in text and "Emitido por" in text and "Válido de" in text
    assert dialog.name.text() == "NOVA CLIENTE COMERCIO LTDA"
    # A CNPJ of another root is refused when saving; the branch of the same root is accepted.
    dialog.cnpj.setText(OTHER_ROOT)
    dialog.save()
    qtbot.waitUntil(lambda: "raiz do CNPJ" in dialog.message.text(), timeout=10_000)
    dialog.cnpj.setText(BRANCH)
    dialog.products[Product.NFE].auto_ciencia.setChecked(True)  # type: ignore[union-attr]
    dialog.products[Product.NFE].wait.setValue(15)  # type: ignore[union-attr]
    dialog.products[Product.NFSE].setChecked(False)
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
    qtbot.waitUntil(lambda: window.company_list.count() == 3, timeout=20_000)
    texts = [window.company_list.item(i).text() for i in range(window.company_list.count())]
    assert any("NOVA CLIENTE COMERCIO LTDA" in t and "55.666.777/0002-62" in t for t in texts)
    line = next(c for c in desk.companies() if c.cnpj == BRANCH)

    settings = desk.admin.settings_of(line.company_id)
    assert settings[Product.NFE].auto_ciencia and settings[Product.NFE].ciencia_wait_minutes == 15
    assert not settings[Product.NFSE].enabled and settings[Product.CTE].enabled


def test_replacing_a_certificate_in_the_dialog_clears_the_expiry_warning(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    # The certificate the company runs on expires in 10 days: the list warns.
    expiring = harness.sandbox.company(
        RECIPIENT, "DESTINATARIA EXEMPLO LTDA", not_after=desk.now() + timedelta(days=10, hours=1)
    )

    desk.admin.replace_certificate(harness.company.id, expiring.pfx, expiring.password)
    window = _window(qtbot, desk, tmp_path)
    qtbot.waitUntil(lambda: "Certificado vence em 10 dias" in window.company_list.item(1).text(), timeout=20_000)
    ult_nsu = harness.ctx.cursors.get(harness.company.id, Product.NFE).ult_nsu
    dialog = _dialog(window, qtbot, harness.company.id)
    qtbot.waitUntil(lambda: "Certificado atual válido até" in dialog.certificate.text(), timeout=10_000)
    assert dialog.products[Product.NFE].isChecked() and not dialog.products[Product.CTE].isChecked()
    renewed = harness.sandbox.company(
        RECIPIENT, "DESTINATARIA EXEMPLO LTDA", not_after=desk.now() + timedelta(days=365)
    )
    text = _check(dialog, qtbot, tmp_path / "novo.pfx", renewed.pfx, renewed.password)
    assert text.startswith("Certificado substituído"), text
    window.refresh_companies()
    qtbot.waitUntil(lambda: "Certificado vence" not in window.company_list.item(1).text(), timeout=20_000)
    assert harness.ctx.cursors.get(harness.company.id, Product.NFE).ult_nsu == ult_nsu


def test_dashboard_shows_a_block_arrive_and_end_and_refuses_query_now_during_a_wait(
    qtbot: QtBot, capturing: Desk, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    window = _window(qtbot, capturing, tmp_path)
    window.pages.setCurrentIndex(1)
    board = window.dashboard
    qtbot.waitUntil(lambda: board.status_table.rowCount() >= 1, timeout=20_000)
    nfe_row = next(r for r, ln in enumerate(board.lines) if ln.product is Product.NFE)
    assert board.status_table.item(nfe_row, 3).text().startswith("Em espera até")
    assert board.status_table.item(nfe_row, 4).text().startswith("em ")  # counting down
    board.status_table.selectRow(nfe_row)
    qtbot.waitUntil(board.query_button.isEnabled)
    board.query_selected()
    qtbot.waitUntil(lambda: board.last_query is not None, timeout=20_000)
    assert board.last_query is not None and not board.last_query.ran
    assert "Próxima consulta permitida às" in board.last_query.message
    allowed = board.last_query.allowed_at
    assert allowed is not None
    # Another system queries the same CNPJ 50 minutes later: our next query meets its hour: 656.
    harness.clock.set(allowed - timedelta(minutes=10))
    harness.sandbox.competitor_query(RECIPIENT)
    harness.clock.set(allowed + timedelta(seconds=5))
    board.last_query = None
    board.query_selected()
    qtbot.waitUntil(lambda: board.last_query is not None, timeout=30_000)
    qtbot.waitUntil(lambda: any(ln.action is Action.BLOCKED for ln in board.lines), timeout=20_000)
    row = next(r for r, ln in enumerate(board.lines) if ln.product is Product.NFE)
    assert board.status_table.item(row, 3).text().startswith("Bloqueada até")
    assert "656" in board.status_table.item(row, 5).text()
    assert "bloqueada" in board.summary.text()
    # An hour later the block is over.
    harness.clock.advance(timedelta(hours=1, minutes=5))
    board.refresh()
    qtbot.waitUntil(lambda: all(ln.action is not Action.BLOCKED for ln in board.lines), timeout=20_000)
    calls = [board.calls_table.item(r, 5).text() for r in range(board.calls_table.rowCount())]
    assert "656" in calls


def test_settings_dialog_saves_what_the_clerk_chose(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    from app.config.settings import load_settings
    from app.ui.settings_dialog import SettingsDialog

    window = _window(qtbot, desk, tmp_path)
    window.company_actions.open_settings()
    dialog = window.company_actions.last_dialog
    assert isinstance(dialog, SettingsDialog)
    qtbot.waitUntil(lambda: dialog.current is not None, timeout=10_000)
    assert dialog.data_dir.text() == str(desk.data_dir) and dialog.notifications.isChecked()
    # Windows offers the option; elsewhere it stays visible, disabled, and says why.
    assert dialog.autostart.isEnabled() == (sys.platform == "win32")
    dialog.notifications.setChecked(False)
    dialog.retention.setValue(30)
    dialog.bundle.setText(str(tmp_path / "nao-existe.pem"))
    dialog.save()
    qtbot.waitUntil(lambda: "Não foi possível ler" in dialog.message.text(), timeout=10_000)
    dialog.bundle.clear()
    with qtbot.waitSignal(dialog.saved, timeout=10_000) as saved:
        dialog.save()
    assert "Configurações salvas." in saved.args[0]
    stored = load_settings(desk.data_dir)
    assert not stored.notifications and stored.archive_retention_days == 30
