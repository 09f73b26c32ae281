"""Screens rendered for a person to look at (the house rule), not compared: saved as PNG into the
folder ``CAPTURA_SCREENSHOTS`` names, when it does."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QWidget


def keep_screenshot(widget: QWidget, name: str) -> None:
    """``widget`` as it is on screen now, as ``name`` (a PNG file name), if screenshots are asked for."""
    folder = os.environ.get("CAPTURA_SCREENSHOTS")
    if folder:
        assert widget.grab().save(str(Path(folder) / name))
