"""Small helpers shared by the commands: secrets from stdin or a prompt, JSON output."""

from __future__ import annotations

import getpass
import json
import sys
from datetime import datetime
from typing import Any

from app.core.clock import brasilia_iso


def read_secret(prompt: str, *, from_stdin: bool) -> str:
    """A password is never a command-line argument (it would land in shell history and `ps`)."""
    if from_stdin or not sys.stdin.isatty():
        line = sys.stdin.readline()
        return line.rstrip("\r\n")
    return getpass.getpass(prompt)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=_plain)
    sys.stdout.write("\n")


def _plain(value: Any) -> str:
    """Instants as ISO 8601 in Brasília time, to the second (as every other time the app shows)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return brasilia_iso(value)
    return str(value)
