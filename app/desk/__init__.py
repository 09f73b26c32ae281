"""The desk: the one facade the window and the command line use over a data folder.

It owns the office (database, vault, settings), the capture service and the data-folder lock,
and answers in frozen dataclasses (``app.desk.views``) whose labels live in ``app.desk.labels``.
It sits above ``app.demo`` so that the window starts the demonstration through it too; the UI
imports nothing below it except ``app.core`` and the store's records (an import-linter contract).
"""

from app.desk.desk import Desk, DeskError, ReadOnly

__all__ = ["Desk", "DeskError", "ReadOnly"]
