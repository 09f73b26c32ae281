"""The window logs like the daemon: the data folder's rotating log, the secret filter, and every
uncaught exception (a Qt slot's, a thread's) in it, which under pythonw on Windows has no console."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from app.config.logs import BACKUP_COUNT, MAX_BYTES, log_file
from app.desk.window_log import closing, start_window_log


def _handler_of(path: Path) -> object:
    import logging

    return next(h for h in logging.getLogger().handlers if getattr(h, "baseFilename", None) == str(path))


def test_the_window_log_rotates_filters_secrets_and_catches_what_nobody_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "dados"
    console: list[object] = []  # the previous hooks (a console's traceback) still run
    monkeypatch.setattr(sys, "excepthook", lambda *args: console.append(args[1]))
    monkeypatch.setattr(threading, "excepthook", lambda args: console.append(args.exc_value))
    hooks = (sys.excepthook, threading.excepthook)
    stop = start_window_log(data)
    try:
        path = log_file(data)
        handler = _handler_of(path)
        assert (handler.maxBytes, handler.backupCount) == (MAX_BYTES, BACKUP_COUNT)  # type: ignore[attr-defined]
        # A Qt slot's exception reaches sys.excepthook (PySide6); a thread's, threading.excepthook.
        try:
            raise ValueError("senha=segredo123 no slot")
        except ValueError:
            sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]

        def fail() -> None:
            raise RuntimeError("falhou na thread")

        worker = threading.Thread(target=fail, name="trabalhador")
        worker.start()
        worker.join(timeout=10)
        closing()
    finally:
        stop()
    assert (sys.excepthook, threading.excepthook) == hooks  # put back
    assert [str(e) for e in console] == ["senha=segredo123 no slot", "falhou na thread"]
    text = path.read_text(encoding="utf-8")
    assert "Janela aberta" in text and "Janela fechada" in text
    assert "Erro não tratado: senha=***" in text and "segredo123" not in text
    assert "Traceback" in text and "ValueError" in text
    assert "Erro não tratado na thread trabalhador: falhou na thread" in text and "RuntimeError" in text
