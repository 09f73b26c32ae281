"""The desk: the one facade the window and the command line use over a data folder.

It owns the office (database, vault, settings), the capture service and the data-folder lock,
and answers in frozen dataclasses (``app.desk.views``) whose labels live in ``app.desk.labels``.
It sits above ``app.demo`` so that the window starts the demonstration through it too; the UI
imports nothing below it except ``app.core`` and the store's records (an import-linter contract).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.desk.desk import Desk
    from app.desk.errors import DeskError

__all__ = ["Desk", "DeskError"]


def __getattr__(name: str) -> Any:
    """``Desk`` and its errors on first use: the window's first paint imports only the desk's
    values and labels; the capture, the store and the protocols load on the worker that opens it."""
    if name == "DeskError":
        from app.desk.errors import DeskError

        return DeskError
    if name in __all__:
        from app.desk import desk

        return getattr(desk, name)
    raise AttributeError(name)
