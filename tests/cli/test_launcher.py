from __future__ import annotations

import io
import json
import os
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


@pytest.mark.parametrize(
    ("environ", "platform", "opens"),
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
        ({"QT_QPA_PLATFORM": "minimal"}, "linux", True),
        ({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
        ({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, "linux", False),
        ({}, "win32", True),
        ({}, "darwin", True),
    ],
)
def test_display_problem_is_decided_before_qt(environ: dict[str, str], platform: str, opens: bool) -> None:
    from app.launcher import display_problem

    problem = display_problem(environ, platform)
    assert (problem is None) is opens
    if problem is not None:
        assert "não há tela disponível" in problem


# A session without a display server is a Linux/BSD thing: a Windows session always has its desktop,
# so there the window opens (({}, "win32", True) above) and this entry-point run has nothing to refuse.
@pytest.mark.skipif(sys.platform == "win32", reason="no display server to lack on Windows: the window opens")
def test_the_demo_without_a_display_says_so_in_portuguese_and_points_at_headless(tmp_path: Path) -> None:
    # The real entry point in a fresh interpreter, as `packaging/dev.py demo` runs it on a server.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["CAPTURA_DATA_DIR"] = str(tmp_path / "data")
    code = "\n".join(
        [
            "import runpy, sys",
            "sys.argv = ['main.py', '--demo']",
            "try:",
            "    runpy.run_path('main.py', run_name='__main__')",
            "except SystemExit as exit_:",
            "    assert not any(m.startswith('PySide6') for m in sys.modules)",
            "    raise",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "não há tela disponível" in result.stderr
    assert "python main.py --demo --headless" in result.stderr
    assert "qt.qpa" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "data-demo").exists()  # refused before touching any folder


HEAVY = ("sqlalchemy", "alembic", "app.capture.context", "app.store.db", "app.desk.desk", "app.sandbox.sandbox", "zeep")


@pytest.mark.parametrize("argv", [["--help"], ["documents", "list", "--help"], ["sandbox", "serve", "--help"]])
def test_help_loads_no_database_capture_or_simulator(argv: list[str]) -> None:
    # `--help` stays within the cold-start goal: the SQL, the capture and the protocols load on use.
    code = "\n".join(
        [
            "import runpy, sys",
            f"sys.argv = ['main.py', *{argv!r}]",
            "try:",
            "    runpy.run_path('main.py', run_name='__main__')",
            "except SystemExit as exit_:",
            "    assert exit_.code == 0",
            f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r})",
            "print('HEAVY', heavy)",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout
