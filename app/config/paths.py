"""Where the app keeps its data: ``--data-dir``, else ``CAPTURA_DATA_DIR``, else the folder chosen in
the settings dialog, else the OS per-user folder.

The demo never shares a folder with real data: it lives beside it, in ``<data dir>-demo``.
A folder on the network is refused (:func:`check_data_dir`): SQLite's locks and write-ahead log
corrupt the database over SMB or NFS.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import platformdirs

from app.config.winpaths import network_location
from app.core.errors import CapturaError

APP_DIR_NAME = "CapturaDFe"
ENV_DATA_DIR = "CAPTURA_DATA_DIR"
PREFERENCES_FILENAME = "preferencias.json"


class NetworkDataFolder(CapturaError):
    """The data folder is on a network share, a mapped network drive or a network mount."""


def check_data_dir(path: Path, *, locate: Callable[[Path], str | None] = network_location) -> Path:
    """``path`` when it is on this computer's own disk; a refusal that says where to go instead
    when it is on the network (``locate``: where a path lives, its OS probes replaceable in tests)."""
    where = locate(path)
    if where is not None:
        raise NetworkDataFolder(
            f"Pastas de rede não servem para o banco SQLite: {path} está {where}, e o banco em rede "
            "se corrompe. Escolha uma pasta deste computador (por exemplo, a pasta padrão) ou, para "
            "os computadores do escritório dividirem os mesmos dados, use o banco do escritório "
            "(PostgreSQL) em vez de uma pasta compartilhada."
        )
    return path


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
    """Open ``path`` from the next start on (None: the default again); written atomically.
    A network folder is refused (:class:`NetworkDataFolder`) before anything is written."""
    if path is not None:
        check_data_dir(path)
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
    """Create the folder (owner-only on POSIX: it holds encrypted certificates and the database);
    a folder on the network is refused (:class:`NetworkDataFolder`)."""
    check_data_dir(path)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def database_path(data_dir: Path) -> Path:
    return data_dir / "captura.sqlite3"


def logs_dir(data_dir: Path) -> Path:
    return data_dir / "logs"
