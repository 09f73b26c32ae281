from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.launcher import main
from app.sandbox.pki import TestPki

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_the_headless_commands_without_loading_qt() -> None:
    # A fresh interpreter: `--help` must work on a server without a display, and never import Qt.
    code = "\n".join(
        [
            "import runpy, sys",
            "sys.argv = ['main.py', '--help']",
            "try:",
            "    runpy.run_path('main.py', run_name='__main__')",
            "except SystemExit as exit_:",
            "    assert exit_.code == 0",
            "assert not any(m.startswith('PySide6') for m in sys.modules)",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for command in ("certificate", "company", "capture", "documents", "manifest", "status", "sandbox"):
        assert command in result.stdout
    assert "--headless" in result.stdout and "--speed" in result.stdout


def test_group_without_action_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certificate"]) == 2
    assert "show" in capsys.readouterr().err


def test_headless_without_demo_is_a_usage_error(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--headless"]) == 2
    assert "--demo" in capsys.readouterr().err
    assert not data_dir.exists()


def _pfx(tmp_path: Path, **kwargs: object) -> Path:
    pki = TestPki.create()
    issued = pki.company_cert("11222333000181", "ESCRITORIO MODELO LTDA", password="segredo", **kwargs)  # type: ignore[arg-type]
    path = tmp_path / "empresa.pfx"
    path.write_bytes(issued.pfx)
    return path


def test_certificate_show_reads_the_password_from_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pfx = _pfx(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("segredo\n"))
    assert main(["certificate", "show", str(pfx), "--password-stdin", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["cnpj"] == "11222333000181"
    assert shown["holder_name"].startswith("ESCRITORIO MODELO")


def test_certificate_show_wrong_password_exits_1_with_portuguese_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pfx = _pfx(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("errada\n"))
    assert main(["certificate", "show", str(pfx), "--password-stdin"]) == 1
    err = capsys.readouterr().err
    assert "Senha do certificado incorreta" in err
    assert "errada" not in err
