"""Small helpers shared by the commands: the standard streams in UTF-8, secrets from a file, stdin
or a prompt, JSON output.

Windows: a redirected stream (a file, a pipe) gets the ANSI code page (cp1252) from Python, so
``--json > saida.json`` breaks on characters outside it and a password piped in arrives garbled;
the streams are therefore UTF-8 whatever the console. A password may also come as PowerShell 5.1
writes files (``>``: UTF-16LE with a byte-order mark) or Notepad does (UTF-8 with one).
"""

from __future__ import annotations

import codecs
import getpass
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from app.core.clock import brasilia_iso
from app.core.errors import CapturaError

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class SecretUnreadable(CapturaError):
    """A password file or stdin that is not text in UTF-8 (or UTF-16 with its byte-order mark)."""


def utf8_streams() -> None:
    """stdout, stderr and stdin in UTF-8 when redirected; an interactive console keeps its own
    (on Windows, Python already writes the console in Unicode)."""
    for name in ("stdout", "stderr", "stdin"):
        stream = getattr(sys, name)
        if stream is not None:
            to_utf8(stream)


def to_utf8(stream: TextIO) -> bool:
    """Reconfigure ``stream`` to UTF-8 when it is a file or a pipe that is not; True when done."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None or codecs.lookup(stream.encoding or "ascii").name == "utf-8":
        return False
    try:
        interactive = stream.isatty()
    except (OSError, ValueError):
        interactive = False
    if interactive:
        return False
    reconfigure(encoding="utf-8")
    return True


def decode_secret(raw: bytes, source: str) -> str:
    """Text of a password file or stdin: UTF-8, or UTF-8/UTF-16 with a byte-order mark; only a
    final line break (\\n or \\r\\n) is removed (spaces belong to the password)."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raw, encoding = raw[len(bom) :], name
            break
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise SecretUnreadable(
            f"A senha em {source} não está em UTF-8. Salve o arquivo como UTF-8 (no PowerShell: "
            "Set-Content -Encoding utf8) ou use --password-file com o arquivo salvo pelo Bloco de Notas."
        ) from None
    return strip_line_break(text)


def strip_line_break(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def read_secret(prompt: str, *, from_stdin: bool, password_file: Path | None = None) -> str:
    """A password is never a command-line argument (it would land in shell history and `ps`):
    it comes from ``password_file``, from stdin (redirected or ``from_stdin``) or from a prompt."""
    if password_file is not None:
        try:
            raw = password_file.read_bytes()
        except OSError as error:
            raise SecretUnreadable(
                f"Não foi possível ler o arquivo de senha {password_file}: {error.strerror or error}."
            ) from None
        return decode_secret(raw, str(password_file))
    stdin = sys.stdin
    if not (from_stdin or not stdin.isatty()):
        return getpass.getpass(prompt)
    buffer: BinaryIO | None = getattr(stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes (an embedder's)
        return strip_line_break(stdin.readline())
    # typed at a console: the line; a file or a pipe: all of it, its encoding told by its BOM
    raw = buffer.readline() if stdin.isatty() else buffer.read()
    return decode_secret(raw, "entrada padrão")


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=_plain)
    sys.stdout.write("\n")


def _plain(value: Any) -> str:
    """Instants as ISO 8601 in Brasília time, to the second (as every other time the app shows)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return brasilia_iso(value)
    return str(value)
