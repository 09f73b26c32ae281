"""Where the app keeps its data: ``--data-dir``, else ``CAPTURA_DATA_DIR``, else the OS per-user folder.

The demo never shares a folder with real data: it lives beside it, in ``<data dir>-demo``.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_DIR_NAME = "CapturaDFe"
ENV_DATA_DIR = "CAPTURA_DATA_DIR"


def default_data_dir() -> Path:
    # appauthor=False: "%LOCALAPPDATA%\CapturaDFe" on Windows rather than a vendor subfolder.
    return Path(platformdirs.user_data_dir(APP_DIR_NAME, appauthor=False, roaming=False))


def resolve_data_dir(cli_value: str | os.PathLike[str] | None = None, *, demo: bool = False) -> Path:
    """The data folder chosen by the command line, the environment or the OS, in that order."""
    if cli_value:
        base = Path(cli_value)
    elif os.environ.get(ENV_DATA_DIR):
        base = Path(os.environ[ENV_DATA_DIR])
    else:
        base = default_data_dir()
    base = base.expanduser().resolve()
    if demo:
        base = base.with_name(base.name + "-demo")
    return base


def ensure_data_dir(path: Path) -> Path:
    """Create the folder (owner-only on POSIX: it holds encrypted certificates and the database)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def database_path(data_dir: Path) -> Path:
    return data_dir / "captura.sqlite3"


def logs_dir(data_dir: Path) -> Path:
    return data_dir / "logs"
