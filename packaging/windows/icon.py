"""Draw the app's icon file, resources/CapturaDFe.ico, from the tray's own painted mark.

    PYTHONPATH=. QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/windows/icon.py

The .ico is committed; run this again only when the mark changes. Each size is a PNG inside the
ICO container (Windows Vista and later read them), so no image library is needed.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ICON = ROOT / "resources" / "CapturaDFe.ico"
SIZES = (16, 24, 32, 48, 64, 128, 256)


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file holding one PNG per size (ICONDIR, ICONDIRENTRY each, then the images)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, images = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(images))
        images += png
    return header + entries + images


def render() -> dict[int, bytes]:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize
    from PySide6.QtWidgets import QApplication

    sys.path.insert(0, str(ROOT))
    from app.ui.tray import tray_icon

    _app = QApplication.instance() or QApplication(["icon"])
    icon = tray_icon()
    pngs = {}
    for size in SIZES:
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        icon.pixmap(QSize(size, size)).scaled(size, size).toImage().save(buffer, "PNG")
        pngs[size] = bytes(data.data())
    return pngs


if __name__ == "__main__":
    ICON.parent.mkdir(exist_ok=True)
    ICON.write_bytes(ico_bytes(render()))
    print(ICON)
