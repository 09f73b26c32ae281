"""A guard against a reference-count bug of PySide6 6.12.0 on Python 3.11.

Every ``None`` that crosses into Qt as an item's data (``setData(role, None)``, a model's
``data()`` answering ``None`` for a role it does not draw, read through a proxy) loses one
reference to ``None``. On Python 3.12 and later ``None`` is immortal and nothing happens; on 3.11
its count reaches zero after hours of a window refreshing its lists, and Python aborts with
"Fatal Python error: none_dealloc". PySide6 6.11.3 has no such leak, but its QtPdf comes only
with the 150 MB pyside6-addons wheel.

The guard measures the leak once (a hundred ``setData(..., None)`` on a throw-away item) and, only
when it is there, gives ``None`` a reference count no refresh can exhaust, as 3.12 does.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidgetItem

PROBES = 100
RESERVE = 1 << 40  # references: at a million leaked a second, thirty-four years

_guarded = False


def none_leaks() -> int:
    """How many references to ``None`` a hundred ``setData(role, None)`` lose (0 when fixed)."""
    item = QListWidgetItem()
    before = sys.getrefcount(None)
    for _ in range(PROBES):
        item.setData(Qt.ItemDataRole.ForegroundRole, None)
    return max(0, before - sys.getrefcount(None))


def guard_none_refcount() -> bool:
    """Apply the guard when this Python and this PySide6 need it; True when applied (once)."""
    global _guarded
    if _guarded or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _guarded
    if none_leaks():
        refcount = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt, the object's first field
        refcount.value += RESERVE
        _guarded = True
    return _guarded
