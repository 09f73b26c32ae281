"""The settings dialog's options: written once to settings.json (read back by a new office),
the data-folder choice for the next start, the trust bundle checked, start with Windows."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from app.config.paths import resolve_data_dir
from app.config.settings import load_settings
from app.desk import Desk, preferences
from app.sandbox.pki import TestPki
from tests.desk.conftest import Office


def test_saved_preferences_are_read_back_and_applied(desk: Desk, office: Office, tmp_path: Path) -> None:
    current = preferences.read(desk)
    assert current.notifications and current.log_level == "INFO" and current.archive_retention_days == 365
    notes = preferences.save(desk, replace(current, notifications=False, archive_retention_days=90, log_level="DEBUG"))
    assert "Configurações salvas." in notes
    reread = load_settings(desk.data_dir)
    assert (reread.notifications, reread.archive_retention_days, reread.log_level) == (False, 90, "DEBUG")
    assert desk._context().settings.archive_retention_days == 90  # the running capture's retention too
    assert logging.getLogger().level == logging.DEBUG
    logging.getLogger().setLevel(logging.WARNING)
    assert preferences.save(desk, preferences.read(desk)) == ["Nada foi alterado."]


def test_the_trust_bundle_must_hold_certificates(desk: Desk, tmp_path: Path) -> None:
    current = preferences.read(desk)
    wrong = tmp_path / "icp.txt"
    wrong.write_text("não é um certificado", encoding="utf-8")
    with pytest.raises(preferences.PreferencesRefused, match="não contém certificados reconhecíveis"):
        preferences.save(desk, replace(current, icp_brasil_bundle=wrong))
    assert load_settings(desk.data_dir).icp_brasil_bundle == current.icp_brasil_bundle  # nothing written
    bundle = tmp_path / "icp.p7b"  # as the ITI publishes it, with no conversion
    ca = x509.load_pem_x509_certificate(TestPki.create().ca_cert_pem)
    bundle.write_bytes(pkcs7.serialize_certificates([ca], serialization.Encoding.DER))
    notes = preferences.save(desk, replace(current, icp_brasil_bundle=bundle))
    assert any("próxima abertura" in n for n in notes)
    assert load_settings(desk.data_dir).icp_brasil_bundle == bundle


def test_the_data_folder_chosen_opens_next_time(desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = tmp_path / "escritorio"
    notes = preferences.save(desk, replace(preferences.read(desk), next_data_dir=chosen))
    assert any(str(chosen) in n for n in notes)
    monkeypatch.delenv("CAPTURA_DATA_DIR")
    assert resolve_data_dir() == chosen.resolve()
    assert resolve_data_dir(tmp_path / "outra") == (tmp_path / "outra").resolve()  # --data-dir still wins


@pytest.mark.skipif(sys.platform == "win32", reason="the Run key is real on Windows")
def test_start_with_windows_says_it_is_a_no_op_elsewhere(desk: Desk) -> None:
    current = preferences.read(desk)
    assert not current.autostart_supported and not current.autostart
    notes = preferences.save(desk, replace(current, autostart=True))
    assert "só existe no Windows" in " ".join(notes)
