"""The settings dialog's options: the data folder's ``settings.json`` (log level, notifications,
retention of archived exchanges, the ICP-Brasil trust bundle), the user's data-folder choice and
start with Windows. Every option and its default is declared once, in ``app.config.settings``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.config.paths import check_data_dir, remember_data_dir, remembered_data_dir
from app.config.settings import LOG_LEVELS
from app.core.errors import CapturaError
from app.desk import autostart

if TYPE_CHECKING:
    from app.desk.desk import Desk

LOG_LEVEL_LABELS = {
    "DEBUG": "Depuração (tudo)",
    "INFO": "Normal",
    "WARNING": "Somente avisos",
    "ERROR": "Somente erros",
    "CRITICAL": "Somente falhas graves",
}
ICP_BUNDLE_NOTE = (
    "Os servidores do governo usam certificados da ICP-Brasil. Sem arquivo, vale o repositório de "
    "certificados do Windows (basta que ele confie na AC Raiz ICP-Brasil). Se a conexão falhar, baixe a "
    "cadeia do ITI (https://www.gov.br/iti/pt-br/assuntos/repositorio: o arquivo .p7b ou o "
    "\u201cACcompactado\u201d .zip) e indique-o aqui como veio, sem converter."
)


class PreferencesRefused(CapturaError):
    """A value the dialog cannot save (an unreadable trust bundle...)."""


@dataclass(frozen=True, slots=True)
class Preferences:
    data_dir: Path  # the folder this window opened
    next_data_dir: Path | None  # the folder chosen for the next start (None: the default)
    log_level: str
    notifications: bool
    archive_retention_days: int
    icp_brasil_bundle: Path | None
    autostart_supported: bool
    autostart: bool


def read(desk: Desk) -> Preferences:
    settings = desk.settings()
    return Preferences(
        data_dir=desk.data_dir,
        next_data_dir=remembered_data_dir(),
        log_level=settings.log_level,
        notifications=settings.notifications,
        archive_retention_days=settings.archive_retention_days,
        icp_brasil_bundle=settings.icp_brasil_bundle,
        autostart_supported=autostart.supported(),
        autostart=autostart.enabled(),
    )


def _check_bundle(path: Path) -> None:
    from app.certs.bundle import TrustBundleError, read_bundle  # cryptography: not at the window's start

    try:
        read_bundle(path)  # a .p7b, a zip of .crt, a .pem or a .crt
    except TrustBundleError as error:
        raise PreferencesRefused(error.message) from error


def save(desk: Desk, chosen: Preferences) -> list[str]:
    """Write what changed; returns the sentences to show (what takes effect when)."""
    if chosen.log_level not in LOG_LEVELS:
        raise PreferencesRefused(f"Nível de registro desconhecido: {chosen.log_level}.")
    if not 1 <= chosen.archive_retention_days <= 36500:
        raise PreferencesRefused("A retenção dos arquivos de comunicação vai de 1 a 36.500 dias.")
    if chosen.next_data_dir is not None:
        check_data_dir(chosen.next_data_dir)  # a network folder: refused before anything is saved
    current = desk.settings()
    if chosen.icp_brasil_bundle is not None and chosen.icp_brasil_bundle != current.icp_brasil_bundle:
        _check_bundle(chosen.icp_brasil_bundle)
    notes = []
    updated = replace(
        current,
        log_level=chosen.log_level,
        notifications=chosen.notifications,
        archive_retention_days=chosen.archive_retention_days,
        icp_brasil_bundle=chosen.icp_brasil_bundle,
    )
    if updated != current:
        desk.change_settings(updated)
        logging.getLogger().setLevel(updated.log_level)
        if updated.icp_brasil_bundle != current.icp_brasil_bundle:
            notes.append("A nova cadeia ICP-Brasil vale a partir da próxima abertura do programa.")
        notes.append("Configurações salvas.")
    if chosen.next_data_dir != remembered_data_dir():
        remember_data_dir(chosen.next_data_dir)
        where = chosen.next_data_dir or "a pasta padrão"
        notes.append(f"Na próxima abertura, o programa usa {where} como pasta de dados.")
    if chosen.autostart != autostart.enabled() or (not chosen.autostart_supported and chosen.autostart):
        notes.append(autostart.set_enabled(chosen.autostart))
    return notes or ["Nada foi alterado."]
