"""Where the app keeps its data: ``--data-dir``, else ``CAPTURA_DATA_DIR``, else the folder chosen in
the settings dialog, else the OS per-user folder.

The demo never shares a folder with real data: it lives beside it, in ``<data dir>-demo``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import platformdirs

APP_DIR_NAME = "CapturaDFe"
ENV_DATA_DIR = "CAPTURA_DATA_DIR"
PREFERENCES_FILENAME = "preferencias.json"


def default_data_dir() -> Path:
    # appauthor=False: "%LOCALAPPDATA%\CapturaDFe" on Windows rather than a vendor subfolder.
    return Path(platformdirs.user_data_dir(APP_DIR_NAME, appauthor=False, roaming=False))


def preferences_path() -> Path:
    """The user's own choices that cannot live in a data folder (which data folder to open)."""
    return Path(platformdirs.user_config_dir(APP_DIR_NAME, appauthor=False, roaming=True)) / PREFERENCES_FILENAME


def remembered_data_dir() -> Path | None:
    """The data folder the user chose in the settings dialog, if any (an unreadable file: none)."""
    try:
        raw = json.loads(preferences_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = raw.get("data_dir") if isinstance(raw, dict) else None
    return Path(value) if isinstance(value, str) and value else None


def remember_data_dir(path: Path | None) -> Path:
    """Open ``path`` from the next start on (None: the default again); written atomically."""
    target = preferences_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"data_dir": str(path) if path else None}, ensure_ascii=False) + "\n"
    temp = target.with_name(target.name + ".tmp")
    temp.write_text(payload, encoding="utf-8")
    os.replace(temp, target)
    return target


def resolve_data_dir(cli_value: str | os.PathLike[str] | None = None, *, demo: bool = False) -> Path:
    """The data folder chosen by the command line, the environment, the settings dialog or the
    OS, in that order."""
    if cli_value:
        base = Path(cli_value)
    elif os.environ.get(ENV_DATA_DIR):
        base = Path(os.environ[ENV_DATA_DIR])
    else:
        base = remembered_data_dir() or default_data_dir()
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
