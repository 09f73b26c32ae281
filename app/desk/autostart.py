"""Start with Windows: the per-user Run key (HKCU\\...\\CurrentVersion\\Run), nothing else.

Elsewhere it is a no-op that says so: the app is a Windows program, and on another system the
clerk's session manager decides what starts.
"""

from __future__ import annotations

import sys
from pathlib import Path

RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
VALUE_NAME = "CapturaDFe"
NOT_WINDOWS = "Iniciar com o Windows só existe no Windows; neste sistema nada foi alterado."


def supported() -> bool:
    return sys.platform == "win32"


TRAY_OPTION = "--tray"  # app.launcher: the window stays hidden, the tray icon alone shows


def command() -> str:
    """What the Run key starts, in the tray: the installed executable (CapturaDFe.exe, frozen by
    PyInstaller), or this Python's pythonw with main.py from a source checkout."""
    if getattr(sys, "frozen", False):
        return f'"{sys.executable}" {TRAY_OPTION}'
    main = Path(__file__).resolve().parents[2] / "main.py"
    pythonw = Path(sys.executable).with_name("pythonw.exe")
    runner = pythonw if pythonw.is_file() else Path(sys.executable)
    return f'"{runner}" "{main}" {TRAY_OPTION}'


def enabled() -> bool:
    if not supported():
        return False
    import winreg  # type: ignore[import-not-found,unused-ignore]

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:  # type: ignore[attr-defined,unused-ignore]
            winreg.QueryValueEx(key, VALUE_NAME)  # type: ignore[attr-defined,unused-ignore]
    except OSError:
        return False
    return True


def set_enabled(on: bool) -> str:
    """Write or remove the Run value; returns the sentence to show."""
    if not supported():
        return NOT_WINDOWS
    import winreg  # type: ignore[import-not-found,unused-ignore]

    access = winreg.KEY_SET_VALUE  # type: ignore[attr-defined,unused-ignore]
    with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, access) as key:  # type: ignore[attr-defined,unused-ignore]
        if on:
            winreg.SetValueEx(key, VALUE_NAME, 0, winreg.REG_SZ, command())  # type: ignore[attr-defined,unused-ignore]
            return "O Captura DF-e vai iniciar com o Windows, na bandeja."
        try:
            winreg.DeleteValue(key, VALUE_NAME)  # type: ignore[attr-defined,unused-ignore]
        except FileNotFoundError:
            pass
        return "O Captura DF-e não inicia mais com o Windows."
