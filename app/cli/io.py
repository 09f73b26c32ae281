"""Small helpers shared by the commands: secrets from stdin or a prompt, JSON output."""

from __future__ import annotations

import getpass
import json
import sys
from typing import Any


def read_secret(prompt: str, *, from_stdin: bool) -> str:
    """A password is never a command-line argument (it would land in shell history and `ps`)."""
    if from_stdin or not sys.stdin.isatty():
        line = sys.stdin.readline()
        return line.rstrip("\r\n")
    return getpass.getpass(prompt)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")
