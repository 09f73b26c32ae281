"""The PyInstaller one-folder bundle, made by the Windows CPython (under Wine on Linux).

Windowed, with the app's icon and a version resource; the Qt plugins and translations, tzdata, the
PDFs' fonts and the XSDs come with it; no UPX. The result is build/windows/dist/CapturaDFe/ with
CapturaDFe.exe inside.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from windows import standins
from windows.toolchain import CACHE, PREFIXES, ROOT, Wine, wine_path

SPEC = Path(__file__).resolve().parent / "CapturaDFe.spec"
DIST = CACHE / "dist"
BUNDLE = DIST / "CapturaDFe"
PUBLISHER = "Captura DF-e"
# Qt translations kept: the interface is in Brazilian Portuguese (and English, Qt's own).
KEEP_TRANSLATIONS = re.compile(r"_(pt_BR|pt|en)\.qm$")


def version() -> str:
    text = (ROOT / "app" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit("app/__init__.py não declara __version__")
    return found.group(1)


def numeric_version() -> tuple[int, int, int, int]:
    parts = [int(p) for p in re.findall(r"\d+", version())[:4]]
    return (*parts, 0, 0, 0, 0)[:4]  # type: ignore[return-value]


def version_resource() -> str:
    """PyInstaller's VSVersionInfo text: what Explorer shows under the exe's Properties > Details."""
    numbers = numeric_version()
    strings = {
        "CompanyName": PUBLISHER,
        "FileDescription": "Captura DF-e: captura de NF-e, CT-e e NFS-e",
        "FileVersion": version(),
        "InternalName": "CapturaDFe",
        "LegalCopyright": PUBLISHER,
        "OriginalFilename": "CapturaDFe.exe",
        "ProductName": "Captura DF-e",
        "ProductVersion": version(),
    }
    entries = ",\n          ".join(f"StringStruct({k!r}, {v!r})" for k, v in strings.items())
    return f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={numbers}, prodvers={numbers}, mask=0x3f, flags=0x0, OS=0x40004,
                    fileType=0x1, subtype=0x0, date=(0, 0)),
  kids=[
    StringFileInfo([StringTable('041604b0', [
          {entries}])]),
    VarFileInfo([VarStruct('Translation', [0x0416, 1200])])
  ]
)
"""


def build(python_exe: Path) -> Path:
    wine = Wine(PREFIXES / "prefix-build")
    wine.create()
    standins.install(wine.drive_c)  # PyInstaller's hooks import Qt and cryptography while they look
    version_file = CACHE / "version_info.txt"
    version_file.write_text(version_resource(), encoding="utf-8")
    shutil.rmtree(BUNDLE, ignore_errors=True)
    wine.run(
        [python_exe, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", wine_path(DIST), "--workpath", wine_path(CACHE / "pyinstaller-work"), wine_path(SPEC)],
        extra_env={"CAPTURA_VERSION_FILE": wine_path(version_file)},
        timeout=3600,
    )
    prune(BUNDLE)
    check(BUNDLE)
    return BUNDLE


def prune(bundle: Path) -> None:
    """Qt's translations in languages the app does not speak (about 25 MB of the folder)."""
    for qm in bundle.rglob("translations/*.qm"):
        if not KEEP_TRANSLATIONS.search(qm.name):
            qm.unlink()


def check(bundle: Path) -> None:
    """What must and must not be in the folder the installer ships."""
    found = {p.name.lower() for p in bundle.rglob("*")}
    leaked = sorted(set(standins.NAMES) & found)
    if leaked:
        raise SystemExit(f"As DLLs substitutas de teste entraram no pacote: {', '.join(leaked)}")
    needed = ["capturadfe.exe", "qwindows.dll", "qtbase_pt_br.qm", "python311.dll"]
    missing = [name for name in needed if name not in found]
    if missing:
        raise SystemExit(f"Faltam no pacote: {', '.join(missing)}")
