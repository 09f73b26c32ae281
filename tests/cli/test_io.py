"""The command line's streams and passwords as Windows hands them over: a redirected stream in
the ANSI code page (cp1252), password files written by PowerShell 5.1 (``>``: UTF-16LE with a
BOM), by Notepad (UTF-8 with a BOM) or by cmd (``echo senha> arquivo``: CRLF)."""

from __future__ import annotations

import codecs
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.io import SecretUnreadable, decode_secret, read_secret, to_utf8
from app.sandbox.pki import TestPki

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "Açaí-Łódź 2026"  # Ł and ź are outside cp1252


@pytest.mark.parametrize(
    ("raw", "written_by"),
    [
        (PASSWORD.encode("utf-8"), "UTF-8 without a line break"),
        (PASSWORD.encode("utf-8") + b"\n", "echo senha | (bash), Set-Content on PowerShell 7"),
        (PASSWORD.encode("utf-8") + b"\r\n", "echo senha> arquivo (cmd), PowerShell 7 on Windows"),
        (codecs.BOM_UTF8 + (PASSWORD + "\r\n").encode("utf-8"), "Set-Content -Encoding utf8 (PowerShell 5.1), Notepad"),
        (codecs.BOM_UTF16_LE + (PASSWORD + "\r\n").encode("utf-16-le"), "> or Out-File (PowerShell 5.1)"),
        (codecs.BOM_UTF16_BE + (PASSWORD + "\n").encode("utf-16-be"), "UTF-16 big-endian with its BOM"),
    ],
)
def test_a_password_in_each_encoding_windows_writes(raw: bytes, written_by: str) -> None:
    assert decode_secret(raw, "senha.txt") == PASSWORD, written_by


def test_only_the_final_line_break_is_removed() -> None:
    assert decode_secret(b"senha \r\n", "x") == "senha "  # cmd's `echo senha |` adds that space: kept
    assert decode_secret(b"linha1\nlinha2\n\n", "x") == "linha1\nlinha2\n"
    assert decode_secret(b"  senha\t", "x") == "  senha\t"


def test_a_password_in_the_ansi_code_page_is_refused_with_the_way_out() -> None:
    with pytest.raises(SecretUnreadable, match=r"não está em UTF-8.*Set-Content -Encoding utf8"):
        decode_secret("Açaí\r\n".encode("cp1252"), "senha.txt")  # Set-Content on PowerShell 5.1


def test_password_file_and_stdin_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "senha.txt"
    file.write_bytes(codecs.BOM_UTF16_LE + (PASSWORD + "\r\n").encode("utf-16-le"))
    assert read_secret("Senha: ", from_stdin=False, password_file=file) == PASSWORD
    with pytest.raises(SecretUnreadable, match="Não foi possível ler o arquivo de senha"):
        read_secret("Senha: ", from_stdin=False, password_file=tmp_path / "faltando.txt")
    # `python main.py ... --password-stdin < senha.txt` in cmd with a file PowerShell wrote
    piped = io.TextIOWrapper(io.BytesIO(file.read_bytes()), encoding="cp1252")
    monkeypatch.setattr(sys, "stdin", piped)
    assert read_secret("Senha: ", from_stdin=True) == PASSWORD


class _Console(io.TextIOWrapper):
    """An interactive console (isatty), as Windows' console stream."""

    def isatty(self) -> bool:
        return True


def test_a_redirected_stream_in_the_ansi_code_page_becomes_utf8_a_console_is_left_alone() -> None:
    redirected = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")  # Windows: stdout into a file
    assert to_utf8(redirected)
    redirected.write("Łódź ✓")
    redirected.flush()
    assert redirected.buffer.getvalue() == "Łódź ✓".encode()  # type: ignore[attr-defined]
    console = _Console(io.BytesIO(), encoding="cp850")
    assert not to_utf8(console) and console.encoding == "cp850"
    assert not to_utf8(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))


def test_json_into_a_file_is_utf8_when_the_system_says_cp1252(tmp_path: Path) -> None:
    # PYTHONIOENCODING=cp1252 is what Windows' Python gives a redirected stdout; the password file
    # is what PowerShell 5.1's `>` writes.
    pki = TestPki.create()
    issued = pki.company_cert("11222333000181", "ŁÓDŹ AÇÚCAR LTDA", password=PASSWORD)
    pfx = tmp_path / "empresa.pfx"
    pfx.write_bytes(issued.pfx)
    secret = tmp_path / "senha.txt"
    secret.write_bytes(codecs.BOM_UTF16_LE + (PASSWORD + "\r\n").encode("utf-16-le"))
    env = dict(os.environ, PYTHONIOENCODING="cp1252", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "main.py", "certificate", "show", str(pfx), "--password-file", str(secret), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert json.loads(done.stdout.decode("utf-8"))["holder_name"].startswith("ŁÓDŹ AÇÚCAR")


def test_password_stdin_and_password_file_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    from app.launcher import main

    with pytest.raises(SystemExit):
        main(["certificate", "show", "a.pfx", "--password-stdin", "--password-file", "senha.txt"])
    assert "não pode ser usado junto com o argumento" in capsys.readouterr().err
