"""The app's log: a rotating file in ``<data_dir>/logs/captura.log``, never holding a secret.

Every record passes :class:`RedactSecrets` before any handler writes it: PEM private-key blocks,
``password=``/``senha=`` pairs and long base64 runs (possible key material or a whole PFX) are
replaced by a placeholder, in the message, its arguments and the formatted traceback alike.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path

from app.config.paths import ensure_data_dir, logs_dir
from app.core.clock import BRASILIA

LOG_FILENAME = "captura.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUP_COUNT = 5
FORMAT = "%(asctime)s %(levelname)-7s [%(threadName)s] %(name)s: %(message)s"
# Libraries that log every request or job at INFO: their detail is in our own records already.
QUIET_LOGGERS = ("apscheduler", "httpx", "httpcore", "urllib3")
_MARK = "_captura_handler"
_previous_level: list[int] = []  # the root level before setup_logging, restored by shutdown_logging

_PEM_KEY = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL)
_SECRET_PAIR = re.compile(
    r"""(?ix)
    \b(password|passwd|pwd|senha|secret|segredo|token|pin)
    (\s*[=:]\s*)
    ("[^"]*"|'[^']*'|[^\s,;&)\]}]+)
    """
)
# 80+ characters of the base64 alphabet, possibly wrapped over lines: no hash (hex SHA-256 is 64),
# key (44) or NSU (15) is that long, while a DER key or a PFX always is.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}(?:\r?\n[A-Za-z0-9+/]{16,})*={0,2}")


def redact(text: str) -> str:
    """``text`` with every recognisable secret replaced by a placeholder."""
    text = _PEM_KEY.sub("[chave privada omitida]", text)
    text = _SECRET_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    return _BASE64_RUN.sub(_base64_placeholder, text)


def _base64_placeholder(match: re.Match[str]) -> str:
    run = match.group(0)
    compact = "".join(run.split())
    # Paths and long identifiers are not base64 blobs: real key material mixes cases and digits.
    if len(compact) < 80 or not (
        any(c.isdigit() for c in compact) and any(c.isupper() for c in compact) and any(c.islower() for c in compact)
    ):
        return run
    return f"[{len(compact)} caracteres base64 omitidos]"


class RedactSecrets(logging.Filter):
    """Rewrites a record so that no handler ever sees a secret in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: keep what we can show
            message = f"{record.msg} {record.args}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class BrasiliaFormatter(logging.Formatter):
    """Times in Brasília with their offset (``2026-11-02 09:58:03,123-03:00``), as the messages
    beside them say them ("Aguardando até 14:05"), whatever zone the computer is set to."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        instant = datetime.fromtimestamp(record.created, BRASILIA)
        if datefmt:
            return instant.strftime(datefmt)
        offset = instant.strftime("%z")
        return f"{instant:%Y-%m-%d %H:%M:%S},{int(record.msecs):03d}{offset[:3]}:{offset[3:]}"


def log_file(data_dir: Path) -> Path:
    return logs_dir(data_dir) / LOG_FILENAME


def setup_logging(data_dir: Path, *, level: str = "INFO", console: bool = False) -> Path:
    """Send the root logger to the data folder's rotating log (and stderr if ``console``).

    Calling it again replaces the handlers of a previous call (another data folder, another
    level); :func:`shutdown_logging` removes them. Returns the log file's path.
    """
    path = log_file(data_dir)
    ensure_data_dir(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutdown_logging()
    formatter = BrasiliaFormatter(FORMAT)
    handlers: list[logging.Handler] = [
        RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8", delay=True)
    ]
    if console:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger()
    _previous_level.append(root.level)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(RedactSecrets())
        setattr(handler, _MARK, True)
        root.addHandler(handler)
    root.setLevel(level.upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return path


def log_uncaught() -> Callable[[], None]:
    """Log what nobody caught: exceptions in Qt slots (PySide6 hands them to ``sys.excepthook``)
    and in threads. Under ``pythonw`` on Windows there is no console: without this, they vanish.

    The previous hooks still run (a console shows the traceback as before). Returns a function
    that puts them back.
    """
    previous, previous_thread = sys.excepthook, threading.excepthook
    log = logging.getLogger("app.uncaught")

    def uncaught(kind: type[BaseException], value: BaseException, traceback: object) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            log.critical("Erro não tratado: %s", value, exc_info=(kind, value, traceback))  # type: ignore[arg-type]
        previous(kind, value, traceback)  # type: ignore[arg-type]

    def uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else "?"
        exc_info = (args.exc_type, args.exc_value, args.exc_traceback)
        log.critical("Erro não tratado na thread %s: %s", name, args.exc_value, exc_info=exc_info)  # type: ignore[arg-type]
        previous_thread(args)

    sys.excepthook, threading.excepthook = uncaught, uncaught_in_thread

    def restore() -> None:
        sys.excepthook, threading.excepthook = previous, previous_thread

    return restore


def shutdown_logging() -> None:
    """Remove and close the handlers :func:`setup_logging` installed."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _MARK, False):
            root.removeHandler(handler)
            handler.close()
    if _previous_level:
        root.setLevel(_previous_level[0])
        _previous_level.clear()
