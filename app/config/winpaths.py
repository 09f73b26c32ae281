"""Windows' path limits and network folders, as pure functions of a path's text (so they are
tested anywhere on ``PureWindowsPath``) beside the one OS probe each needs.

- MAX_PATH: without the ``LongPathsEnabled`` policy, Windows refuses a full path of 260 characters
  or more and answers "path not found" (WinError 3), which reads like a missing drive. The
  ``\\\\?\\`` prefix (``\\\\?\\UNC\\`` for a share) lifts the limit to 32,767 characters.
- Network folders: SQLite's locks and its write-ahead log are not safe over SMB or NFS; a data
  folder there corrupts the database sooner or later.
"""

from __future__ import annotations

import ntpath
import os
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath

MAX_PATH = 260  # characters, the terminating NUL included: 259 usable
MAX_COMPONENT = 255  # one folder or file name, even with the prefix
MAX_EXTENDED = 32_767  # a whole path with the prefix
EXTENDED_PREFIX = "\\\\?\\"
UNC_PREFIX = "\\\\?\\UNC\\"
DRIVE_REMOTE = 4  # GetDriveTypeW's answer for a mapped network drive
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "ceph", "glusterfs", "fuse.sshfs", "9p", "davfs"}
)


class PathTooLong(ValueError):
    """Longer than Windows accepts even with the ``\\\\?\\`` prefix (a name over 255 characters)."""


def extended_path(path: str) -> str:
    """``path`` (absolute, Windows) with the prefix that lifts MAX_PATH; already prefixed: as is.

    The prefix turns off Windows' own normalisation, so the path is normalised here first
    (forward slashes, ``.`` and ``..``)."""
    if path.startswith((EXTENDED_PREFIX, "\\\\.\\")):
        return path
    normal = ntpath.normpath(path)
    if normal.startswith("\\\\"):  # \\server\share\... -> \\?\UNC\server\share\...
        return UNC_PREFIX + normal[2:]
    return EXTENDED_PREFIX + normal


def length_problem(path: str) -> str | None:
    """Why Windows cannot write ``path`` even with the prefix; None when it can."""
    for part in PureWindowsPath(path).parts[1:]:
        if len(part) > MAX_COMPONENT:
            return f"o nome {part[:40]}... tem {len(part)} caracteres, e o Windows aceita até {MAX_COMPONENT} por nome"
    if len(extended_path(path)) >= MAX_EXTENDED:
        return f"o caminho tem {len(path)} caracteres, e o Windows aceita até {MAX_EXTENDED - 1}"
    return None


def beyond_max_path(path: str) -> bool:
    """True when Windows without ``LongPathsEnabled`` refuses ``path`` as it is written."""
    return not path.startswith(EXTENDED_PREFIX) and len(path) >= MAX_PATH


def for_writing(path: Path, *, windows: bool = sys.platform == "win32") -> Path:
    """The path to hand to the OS when writing ``path``: on Windows past MAX_PATH, prefixed.

    Raises :class:`PathTooLong` when not even the prefix makes it acceptable."""
    if not windows:
        return path
    text = os.path.abspath(path)
    if not beyond_max_path(text):
        return path
    problem = length_problem(text)
    if problem is not None:
        raise PathTooLong(problem)
    return Path(extended_path(text))


# ---------------------------------------------------------------------------- network folders


def unc_share(path: PureWindowsPath) -> str | None:
    """``\\\\server\\share`` when ``path`` is on a Windows share (plain or prefixed UNC); else None."""
    drive = path.drive
    if drive.upper().startswith(UNC_PREFIX.upper()):
        return "\\\\" + drive[len(UNC_PREFIX) :]
    if drive.startswith(("\\\\?\\", "\\\\.\\")):
        return None  # \\?\C:\... is a local drive's path
    if drive.startswith("\\\\"):
        return drive
    return None


def drive_letter(path: PureWindowsPath) -> str | None:
    """``Z:`` for ``Z:\\...`` (prefixed or not); None for a share or a relative path."""
    drive = path.drive
    if drive.startswith(("\\\\?\\", "\\\\.\\")):
        drive = drive[4:]
    return drive.upper() if len(drive) == 2 and drive[1] == ":" else None


def windows_drive_type(root: str) -> int:
    """GetDriveTypeW of ``Z:\\`` (4: a mapped network drive); Windows only."""
    import ctypes

    windll = ctypes.windll  # type: ignore[attr-defined,unused-ignore]
    return int(windll.kernel32.GetDriveTypeW(ctypes.c_wchar_p(root)))


def mount_type(mounts: str, path: PurePosixPath) -> str | None:
    """The filesystem type of the mount (in ``/proc/mounts`` text) that holds ``path``."""
    best: tuple[int, str] | None = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = PurePosixPath(fields[1].replace("\\040", " "))
        if (path == point or point in path.parents) and (best is None or len(point.parts) > best[0]):
            best = (len(point.parts), fields[2])
    return best[1] if best else None


def network_location(
    path: Path,
    *,
    platform: str = sys.platform,
    drive_type: Callable[[str], int] | None = None,
    mounts: Callable[[], str] | None = None,
) -> str | None:
    """Where ``path`` lives when that is a network (a share, a mapped drive, an NFS or SMB mount),
    in words for a message; None for a local disk. ``drive_type`` and ``mounts`` are the OS probes
    (GetDriveTypeW, ``/proc/mounts``), replaceable in tests."""
    if platform == "win32":
        windows = PureWindowsPath(str(path))
        share = unc_share(windows)
        if share is not None:
            return f"na pasta compartilhada {share}"
        letter = drive_letter(windows)
        if letter is None:
            return None
        probe = drive_type or windows_drive_type
        try:
            remote = probe(letter + "\\") == DRIVE_REMOTE
        except OSError:
            return None
        return f"na unidade de rede {letter}" if remote else None
    if not platform.startswith("linux"):
        return None
    read = mounts or _proc_mounts
    try:
        text = read()
    except OSError:
        return None
    kind = mount_type(text, PurePosixPath(str(path)))
    if kind is None or kind not in NETWORK_FILESYSTEMS:
        return None
    return f"numa montagem de rede ({kind})"


def _proc_mounts() -> str:
    with open("/proc/mounts", encoding="utf-8", errors="replace") as mounts:
        return mounts.read()
