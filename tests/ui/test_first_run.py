"""The first-run assistant: opens by itself on an empty data folder, checks the ICP-Brasil chain,
adds an export profile, is remembered once skipped or finished, and is reachable from Ajuda."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWizard
from pytestqt.qtbot import QtBot

from app.desk import Desk
from app.sandbox.pki import TestPki
from app.ui.company_dialog import CompanyDialog
from app.ui.first_run import DISMISSED_KEY, EXPORT_PROFILE, FirstRunWizard
from app.ui.main_window import MainWindow
from tests.conftest import show_artifacts

SCREEN = (1366, 768)


@pytest.fixture
def empty_desk(tmp_path: Path) -> Iterator[Desk]:
    desk = Desk(tmp_path / "dados", capture=False)
    desk.open()
    try:
        yield desk
    finally:
        desk.close()


def _window(qtbot: QtBot, desk: Desk, settings: QSettings) -> MainWindow:
    window = MainWindow(desk, settings=settings)
    qtbot.addWidget(window)
    window.resize(*SCREEN)
    window.show()
    qtbot.waitUntil(lambda: window.opened is not None, timeout=20_000)
    return window


def test_a_first_start_opens_the_assistant_which_checks_the_chain_and_adds_an_export_folder(
    qtbot: QtBot, empty_desk: Desk, tmp_path: Path
) -> None:
    shots = show_artifacts("Assistente de primeiros passos", tmp_path / "telas")
    shots.mkdir()
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    window = _window(qtbot, empty_desk, settings)
    first_run = window.menus.first_run
    qtbot.waitUntil(lambda: first_run.wizard is not None and first_run.wizard.isVisible(), timeout=20_000)
    wizard = first_run.wizard
    assert isinstance(wizard, FirstRunWizard)
    assert (
        first_run.panel.isVisible()
        and "Nenhuma empresa cadastrada" in first_run.panel.findChild(type(wizard.message)).text()
    )
    window.grab().save(str(shots / "janela-vazia.png"))
    qtbot.waitUntil(lambda: wizard.data_dir.text() == str(empty_desk.data_dir), timeout=10_000)
    assert wizard.button(QWizard.WizardButton.CancelButton).text() == "Pular o assistente"
    wizard.grab().save(str(shots / "1-pasta.png"))
    wizard.next()
    wizard.add_company.click()
    assert isinstance(wizard.company_dialog, CompanyDialog) and wizard.company_dialog.isVisible()
    wizard.company_dialog.reject()
    wizard.grab().save(str(shots / "2-empresa.png"))
    wizard.next()
    wizard.export_dir.setText(str(tmp_path / "exportados"))
    assert wizard.export_on.isChecked()
    wizard.grab().save(str(shots / "3-exportacao.png"))
    wizard.next()
    assert "ICP-Brasil" in wizard.currentPage().title() and "Nenhum arquivo indicado" in wizard.bundle_note.text()
    wizard.grab().save(str(shots / "4-cadeia.png"))
    # A file that is not a PEM chain is refused, and the assistant stays open saying why.
    not_pem = tmp_path / "cadeia.txt"
    not_pem.write_text("isto não é uma cadeia", encoding="utf-8")
    wizard.bundle.setText(str(not_pem))
    wizard.button(QWizard.WizardButton.FinishButton).click()
    qtbot.waitUntil(lambda: bool(wizard.message.text()), timeout=10_000)
    assert str(not_pem.name) in wizard.message.text() or "certificado" in wizard.message.text()
    assert wizard.isVisible() and not settings.value(DISMISSED_KEY)
    chain = tmp_path / "icp-brasil.pem"
    chain.write_bytes(TestPki.create().ca_cert_pem)  # a real certificate chain, as the ITI's file holds
    wizard.bundle.setText(str(chain))
    wizard.button(QWizard.WizardButton.FinishButton).click()
    qtbot.waitUntil(lambda: not wizard.isVisible(), timeout=10_000)
    assert any("cadeia ICP-Brasil" in n for n in wizard.result_notes)
    assert any(str(tmp_path / "exportados") in n for n in wizard.result_notes)
    assert [p.name for p in empty_desk.exports.profiles()] == [EXPORT_PROFILE]
    assert empty_desk.settings().icp_brasil_bundle == chain
    assert str(settings.value(DISMISSED_KEY)) == "true"


def test_once_dismissed_it_waits_in_the_menu_and_the_empty_window_points_to_it(
    qtbot: QtBot, empty_desk: Desk, tmp_path: Path
) -> None:
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    window = _window(qtbot, empty_desk, settings)
    first_run = window.menus.first_run
    qtbot.waitUntil(lambda: first_run.wizard is not None and first_run.wizard.isVisible(), timeout=20_000)
    first_run.wizard.reject()  # type: ignore[union-attr]  # "Pular o assistente"
    assert str(settings.value(DISMISSED_KEY)) == "true"
    window.close()
    again = _window(qtbot, empty_desk, settings)
    qtbot.waitUntil(lambda: again.menus.first_run.panel.isVisible(), timeout=20_000)
    assert again.menus.first_run.wizard is None  # not by itself a second time
    assert again.menus.assistant.text() == "Assistente de primeiros passos…"
    again.menus.first_run.open_button.click()
    qtbot.waitUntil(lambda: again.menus.first_run.wizard is not None and again.menus.first_run.wizard.isVisible())
    again.menus.first_run.wizard.reject()  # type: ignore[union-attr]
    again.menus.assistant.trigger()
    qtbot.waitUntil(lambda: again.menus.first_run.wizard.isVisible())  # type: ignore[union-attr]
    again.menus.first_run.wizard.reject()  # type: ignore[union-attr]
