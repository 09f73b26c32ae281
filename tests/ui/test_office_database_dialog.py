"""Configurações → Banco do escritório: typed, tested against a real PostgreSQL, remembered without
the password (the keyring keeps it); rendered at 1366×768 for a person to look at."""

from __future__ import annotations

import json
from pathlib import Path

import keyring
from pytestqt.qtbot import QtBot

from app.ui.office_database_dialog import OfficeDatabaseDialog
from app.ui.settings_dialog import SettingsDialog
from app.ui.tasks import Tasks
from tests.conftest import show_artifacts
from tests.support.postgres import PostgresCluster

SCREEN = (1366, 768)


def _dialog(qtbot: QtBot, data_dir: Path) -> OfficeDatabaseDialog:
    tasks = Tasks()
    dialog = OfficeDatabaseDialog(data_dir, tasks)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.loaded, timeout=10_000)
    return dialog


def test_the_office_database_is_tested_and_chosen_from_configuracoes(
    qtbot: QtBot, tmp_path: Path, data_dir: Path, postgres_cluster: PostgresCluster
) -> None:
    shots = show_artifacts("Banco do escritório (Configurações)", tmp_path / "telas")
    shots.mkdir()
    name = postgres_cluster.name_of(postgres_cluster.new_database())
    dialog = _dialog(qtbot, data_dir)
    assert "banco SQLite da sua pasta de dados" in dialog.current.text()
    dialog.host.setText("127.0.0.1")
    dialog.port.setValue(postgres_cluster.port)
    dialog.database.setText("nao_existe")
    dialog.user.setText("captura")
    dialog.password.setText("segredo-do-escritorio")
    dialog.test_button.click()
    qtbot.waitUntil(lambda: "não existe nesse servidor" in dialog.message.text(), timeout=15_000)
    dialog.resize(dialog.sizeHint())
    dialog.grab().save(str(shots / "banco-escritorio-erro.png"))
    dialog.database.setText(name)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.message.text().startswith("Conectado a captura@127.0.0.1"), timeout=15_000)
    assert "O banco está vazio" in dialog.message.text()
    dialog.grab().save(str(shots / "banco-escritorio-ok.png"))
    with qtbot.waitSignal(dialog.saved, timeout=10_000) as saved:
        dialog.buttons.accepted.emit()
    where = f"captura@127.0.0.1:{postgres_cluster.port}/{name}"
    assert saved.args[0] == f"Na próxima abertura, esta estação usa o banco do escritório {where}."
    settings = (data_dir / "settings.json").read_text(encoding="utf-8")
    assert json.loads(settings)["office_database"] == f"postgresql://captura@127.0.0.1:{postgres_cluster.port}/{name}"
    assert "segredo-do-escritorio" not in settings
    entry = f"office-db:captura@127.0.0.1:{postgres_cluster.port}/{name}"
    assert keyring.get_password("CapturaDFe", entry) == "segredo-do-escritorio"
    again = _dialog(qtbot, data_dir)  # opened again: the fields back, the password only said to be kept
    assert (again.host.text(), again.port.value(), again.database.text()) == ("127.0.0.1", postgres_cluster.port, name)
    assert again.password.text() == "" and "guardada no cofre" in again.password.placeholderText()


def test_configuracoes_opens_the_office_database_page_and_fits_the_screen(
    qtbot: QtBot, tmp_path: Path, desk: object
) -> None:
    shots = show_artifacts("Configurações em 1366x768", tmp_path / "telas")
    shots.mkdir()
    settings = SettingsDialog(desk, Tasks())  # type: ignore[arg-type]
    qtbot.addWidget(settings)
    settings.show()
    qtbot.waitUntil(lambda: settings.current is not None, timeout=10_000)
    note = settings.data_note  # pytest's long folder path wraps to four lines: none of them clipped
    qtbot.waitUntil(lambda: note.height() >= note.heightForWidth(note.width()), timeout=10_000)
    qtbot.waitUntil(lambda: settings.office_current.text().startswith("SQLite desta pasta"), timeout=10_000)
    page = settings.open_office_database()
    qtbot.waitUntil(lambda: page.loaded, timeout=10_000)
    for widget in (settings, page):
        assert widget.width() <= SCREEN[0] and widget.height() <= SCREEN[1]
    settings.grab().save(str(shots / "configuracoes.png"))
    page.grab().save(str(shots / "banco-escritorio.png"))
    page.use_local()  # the data folder's file: nothing chosen, the page says where it stays
    qtbot.waitUntil(lambda: not page.isVisible(), timeout=10_000)
    assert "SQLite da pasta de dados" in settings.message.text()
