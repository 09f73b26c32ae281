"""Bootstrap for newcomers and CI: creates ./.venv, installs the project into it, then runs it.

    python3 packaging/dev.py demo    # install and start the app on its built-in demo
    python3 packaging/dev.py test    # install and run the checks and the test suite
    python3 packaging/dev.py windows       # build dist/CapturaDFe-<versão>-setup.exe (Wine on Linux)
    python3 packaging/dev.py windows-test  # the Windows lane: tests, install, demo, uninstall; one JSON line

Works on Windows and Linux with only a Python 3.11+ on the PATH. On Debian/Ubuntu, run as root
(as CI does), it also installs the system libraries Qt needs; otherwise it names them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
STAMP = VENV / ".installed-from"
# Shared libraries Qt loads for the offscreen and xcb platforms that a minimal Debian may lack.
DEBIAN_QT_RUNTIME = [
    "libegl1",
    "libgl1",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
    "libfontconfig1",
    "libfreetype6",
    "libdbus-1-3",
    "libglib2.0-0",
    "libx11-xcb1",
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-keysyms1",
    "libxcb-shape0",
]
# Tools the tests use to look at what they made: pdftoppm for PDF pages, Xvfb for screenshots of
# the window and the tray menu on a real X server.
DEBIAN_TEST_TOOLS = ["poppler-utils", "xvfb", "postgresql"]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def run(*cmd: str | os.PathLike[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, env=env)


def ensure_debian_libraries() -> None:
    if not sys.platform.startswith("linux") or shutil.which("dpkg-query") is None:
        return
    missing = []
    for package in DEBIAN_QT_RUNTIME + DEBIAN_TEST_TOOLS:
        probe = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
        )
        if "install ok installed" not in probe.stdout:
            missing.append(package)
    if not missing:
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run("apt-get", "update", "-qq", env=env)
        run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, env=env)
    else:
        print("Aviso: instale (Qt, poppler): sudo apt-get install " + " ".join(missing), file=sys.stderr)


def ensure_venv(extras: str) -> Path:
    """Create the venv and install the project; skipped when pyproject.toml has not changed."""
    python = venv_python()
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return python
    run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(python, "-m", "pip", "install", "--quiet", "-e", f".{extras}")
    STAMP.write_text(wanted)
    return python


def cmd_demo(argv: list[str]) -> int:
    ensure_debian_libraries()
    python = ensure_venv("")
    return subprocess.call([str(python), "main.py", "--demo", *argv], cwd=ROOT)


def cmd_test(argv: list[str]) -> int:
    ensure_debian_libraries()
    python = ensure_venv("[test]")
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    bindir = python.parent
    run(bindir / "ruff", "check", "app", "tests", "main.py", "packaging", env=env)
    run(python, "-m", "mypy", "app", env=env)
    run(bindir / "lint-imports", env=env)
    return subprocess.call([str(python), "-m", "pytest", *argv], cwd=ROOT, env=env)


def host_pip() -> Path:
    """A Python with pip for fetching Windows wheels: the venv's, made bare when there is none yet
    (the project itself is not needed on this side)."""
    python = venv_python()
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    return python


def cmd_windows(argv: list[str]) -> int:
    from windows import lane  # packaging/windows/, beside this script

    return lane.build(host_pip())


def cmd_windows_test(argv: list[str]) -> int:
    from windows import lane

    return lane.lane(argv, host_pip())


def main() -> int:
    commands = {"demo": cmd_demo, "test": cmd_test, "windows": cmd_windows, "windows-test": cmd_windows_test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    try:
        return commands[sys.argv[1]](sys.argv[2:])
    except subprocess.CalledProcessError as error:
        return error.returncode or 1


if __name__ == "__main__":
    sys.exit(main())
