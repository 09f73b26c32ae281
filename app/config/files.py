"""Writing a file the office will open: all of it or nothing (a temporary file renamed).

Here, low in the layers, so the desk, the command line and the exporter (app.export) share it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from app.core.errors import CapturaError


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file in the same folder, then rename it:
    a reader (or a bookkeeping system scanning the folder) never sees half a file."""
    write_atomic_with(path, lambda out: out.write(content))


def write_atomic_with(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """``write_atomic`` for content made while it is written (a ZIP): ``fill`` writes to ``out``."""
    folder = path.parent if str(path.parent) else Path(".")
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            fill(out)
        os.replace(tmp, path)
        tmp = None
    except OSError as error:
        raise CapturaError(f"Não foi possível gravar {path}: {error.strerror or error}.") from error
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
