"""Start with Windows: what the per-user Run key starts (the value itself is Windows-only)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.desk import autostart
from app.launcher import _parser


def test_the_installed_program_starts_in_the_tray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows: the installer's CapturaDFe.exe (a PyInstaller bundle, sys.frozen) is what the Run
    key starts at logon, quoted because the path has spaces, with the tray-only option."""
    installed = r"C:\Users\Ana Souza\AppData\Local\Programs\CapturaDFe\CapturaDFe.exe"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", installed)
    assert autostart.command() == f'"{installed}" --tray'


def test_a_source_checkout_starts_main_py_in_the_tray() -> None:
    command = autostart.command()
    main = Path(autostart.__file__).resolve().parents[2] / "main.py"
    assert command.endswith(f'"{main}" --tray')


def test_the_tray_option_is_one_the_window_understands() -> None:
    args, rest = _parser(commands=False).parse_known_args([autostart.TRAY_OPTION])
    assert args.tray and not rest and args.command is None
    assert not _parser(commands=False).parse_known_args([])[0].tray
    assert autostart.TRAY_OPTION in _parser().format_help()
