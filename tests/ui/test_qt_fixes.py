"""The window outlives PySide6 6.12.0's leak of references to None (Python 3.11 aborts with
"none_dealloc" once None's count reaches zero)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def test_many_nones_handed_to_qt_do_not_abort_python() -> None:
    probe = textwrap.dedent(
        """
        import sys
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QApplication, QListWidgetItem
        from app.ui.qt_fixes import guard_none_refcount, none_leaks
        app = QApplication([])
        leaking = none_leaks() > 0
        guard_none_refcount()
        item = QListWidgetItem()
        for _ in range(200_000):  # far more than None's own count (a few thousand): unguarded, an abort
            item.setData(Qt.ItemDataRole.ForegroundRole, None)
        print("ok", leaking)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("ok")
