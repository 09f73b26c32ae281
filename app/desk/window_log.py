"""The window's log, like the daemon's: ``<data>/logs/captura.log`` with the same rotation and
secret filter (``app.config.logs``), and every uncaught exception in it (Qt slots, threads)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from app import __version__
from app.config.logs import log_uncaught, setup_logging, shutdown_logging
from app.config.settings import SettingsError, load_settings

log = logging.getLogger(__name__)


def closing() -> None:
    """The window's last line: logged as the application quits, before the desk closes (the
    demonstration's own stop takes the log's handlers with it)."""
    log.info("Janela fechada.")


def start_window_log(data_dir: Path) -> Callable[[], None]:
    """Log to the data folder at the level its settings name; returns the function that stops it.

    A settings file that does not read leaves the level at INFO: the window says what is wrong
    with it later, and the log is what helps then.
    """
    try:
        level = load_settings(data_dir).log_level
    except SettingsError:
        level = "INFO"
    path = setup_logging(data_dir, level=level)
    restore_hooks = log_uncaught()
    log.info("Janela aberta: versão %s, pasta de dados %s, log em %s", __version__, data_dir, path)

    def stop() -> None:
        restore_hooks()
        shutdown_logging()

    return stop
