"""The NSIS installer around the bundle: dist/CapturaDFe-<versão>-setup.exe (makensis, Debian's nsis)."""

from __future__ import annotations

import shutil
from pathlib import Path

from windows.bundle import numeric_version, version
from windows.toolchain import DEBIAN_TOOLS, ROOT, native, run

SCRIPT = Path(__file__).resolve().parent / "installer.nsi"
ICON = ROOT / "resources" / "CapturaDFe.ico"
MAX_BYTES = 150 * 1024 * 1024


def output() -> Path:
    return ROOT / "dist" / f"CapturaDFe-{version()}-setup.exe"


def build(bundle: Path) -> Path:
    target = output()
    target.parent.mkdir(parents=True, exist_ok=True)
    makensis = shutil.which("makensis") if native() else DEBIAN_TOOLS["makensis"]
    if makensis is None:
        raise SystemExit("makensis não encontrado: instale o NSIS (https://nsis.sourceforge.io)")
    defines = {
        "VERSION": version(),
        "VERSION4": ".".join(str(n) for n in numeric_version()),
        "BUNDLE": str(bundle),
        "OUTFILE": str(target),
        "ICON": str(ICON),
    }
    run(makensis, "-V2", "-INPUTCHARSET", "UTF8", *(f"-D{k}={v}" for k, v in defines.items()), SCRIPT)
    size = target.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"O instalador tem {size / 2**20:.0f} MB, acima do limite de {MAX_BYTES // 2**20} MB")
    print(f"{target} ({size / 2**20:.1f} MB)")
    return target
