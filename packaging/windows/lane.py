"""The Windows lane: the test suite on the Windows CPython, then the installer in a fresh prefix.

    python3 packaging/dev.py windows-test [--tests-only | --skip-tests] [pytest arguments...]

1. the test suite (or the paths given) on the Windows CPython, Qt offscreen (under Wine on Linux);
2. dist/CapturaDFe-<versão>-setup.exe (built first when missing) installed silently (/S) into a
   fresh Wine prefix: the program under the user's AppData, the Start-menu shortcut and the
   Add/Remove Programs entry with its version are checked;
3. the installed CapturaDFe.exe: --help, then --demo --headless --duration 30 (0 violations);
4. the uninstaller (/S): the program goes, the data folder stays.
The last line printed is one JSON object. The stand-in DLLs go into the prefixes, never elsewhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from windows import bundle, installer, standins
from windows.toolchain import (
    CACHE,
    PREFIXES,
    ROOT,
    Wine,
    ensure_debian_tools,
    ensure_windows_python,
    native,
    wine_path,
)

DEMO_SECONDS = 30
SHORTCUT = "Captura DF-e.lnk"
UNINSTALL_KEY = r"Software\Microsoft\Windows\CurrentVersion\Uninstall\CapturaDFe"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


def _pg_server_module() -> ModuleType:
    """tests/support/pg_server.py (standard library only), the code the tests start servers with."""
    path = ROOT / "tests" / "support" / "pg_server.py"
    spec = importlib.util.spec_from_file_location("captura_pg_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def postgres_for_windows() -> Iterator[dict[str, str]]:
    """Under Wine, one PostgreSQL server of Debian's on a loopback port for the Windows pytest (it
    cannot run Debian's binaries, but reaches Linux loopback TCP): its address in the variable
    tests/support/postgres.py honours. Natively on Windows the tests start their own, as on Linux."""
    if native():
        yield {}
        return
    pg = _pg_server_module()
    server = pg.PostgresServer().start()
    try:
        yield {pg.SERVER_ENV: server.address}
    finally:
        server.stop()


def run_tests(python_exe: Path, pytest_args: list[str]) -> dict[str, Any]:
    """The suite on the Windows CPython; a prefix kept between runs (its boot costs a minute)."""
    # CAPTURA_TESTS_PREFIX: another prefix (its own Windows user, registry and Credential Manager)
    # for a second run beside the first, e.g. the failing tests again while the whole suite runs.
    name = os.environ.get("CAPTURA_TESTS_PREFIX", "prefix-tests")
    wine = Wine(PREFIXES / name)
    wine.create()
    standins.install(wine.drive_c)
    report = CACHE / ("windows-tests.xml" if name == "prefix-tests" else f"windows-tests-{name}.xml")
    report.unlink(missing_ok=True)
    started = time.monotonic()
    with postgres_for_windows() as pg_env:
        result = wine.run(
            [python_exe, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={wine_path(report)}",
             *pytest_args],
            cwd=ROOT, extra_env=pg_env, timeout=4 * 3600, check=False, end_strays=True,
        )  # fmt: skip
    counts = junit_counts(report) if report.exists() else {"passed": 0, "failed": 0, "errors": 1, "skipped": 0}
    counts["exit_code"] = result.returncode
    counts["seconds"] = round(time.monotonic() - started)
    counts["failures"] = failed_tests(report) if report.exists() else ["(sem relatório do pytest)"]
    counts["postgresql_passed"] = postgresql_passed(report) if report.exists() else 0
    return counts


def postgresql_passed(report: Path) -> int:
    """Tests that ran on PostgreSQL and passed (parametrised [postgresql] or named for it)."""
    passed = 0
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314 - our own report
        name = f"{case.get('classname')}::{case.get('name')}".lower()
        done = all(case.find(tag) is None for tag in ("failure", "error", "skipped"))
        passed += int(done and ("postgres" in name))
    return passed


def junit_counts(report: Path) -> dict[str, Any]:
    suite = ET.parse(report).getroot()  # noqa: S314 - written by our own pytest run just now
    suite = suite if suite.tag == "testsuite" else suite[0]
    total, failures, errors, skipped = (int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped"))
    return {"passed": total - failures - errors - skipped, "failed": failures, "errors": errors, "skipped": skipped}


def failed_tests(report: Path) -> list[str]:
    names = []
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314 - our own report
        if case.find("failure") is not None or case.find("error") is not None:
            names.append(f"{case.get('classname')}::{case.get('name')}")
    return names


def check_installed(wine: Wine, setup: Path) -> dict[str, Any]:
    """Install silently into the fresh prefix and look for what a clerk would find."""
    wine.run([setup, "/S"], timeout=1800)
    wine.wait()
    user = wine.user_dir()
    program_dir = user / "AppData" / "Local" / "Programs" / "CapturaDFe"
    program = program_dir / "CapturaDFe.exe"
    start_menu = user / "AppData" / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs"
    registry = (wine.prefix / "user.reg").read_text(encoding="utf-8", errors="replace")
    return {
        "program": program if program.exists() else None,
        "shortcut": (start_menu / SHORTCUT).exists(),
        "uninstall_entry_version": registry_value(registry, UNINSTALL_KEY, "DisplayVersion"),
        "autostart": registry_value(registry, RUN_KEY, "CapturaDFe"),
    }


def registry_value(user_reg: str, key: str, name: str) -> str | None:
    """A string value from a Wine prefix's user.reg (HKCU as text: [key] then "name"="value")."""
    escaped = re.escape(key.replace("\\", "\\\\"))
    section = re.search(r"^\[" + escaped + r"\][^\n]*\n(.*?)(?:\n\n|\Z)", user_reg, re.MULTILINE | re.DOTALL)
    if section is None:
        return None
    found = re.search(r'^"' + re.escape(name) + r'"="((?:[^"\\]|\\.)*)"', section.group(1), re.MULTILINE)
    return None if found is None else re.sub(r"\\(.)", r"\1", found.group(1))


def run_demo(wine: Wine, program: Path) -> dict[str, Any]:
    started = time.monotonic()
    result = wine.run([program, "--demo", "--headless", "--duration", str(DEMO_SECONDS)], timeout=900, check=False)
    found = re.search(r"rbitro: (\d+) viola", result.stdout)
    violations = int(found.group(1)) if found else None
    documents = re.search(r"Documentos guardados: (\d+)", result.stdout)
    return {
        "exit_code": result.returncode,
        "violations": violations,
        "documents": int(documents.group(1)) if documents else None,
        "seconds": round(time.monotonic() - started),
        "verdict": "ok" if result.returncode == 0 and violations == 0 else "falhou",
    }


def lane(argv: list[str], host_python: Path) -> int:
    started = time.monotonic()
    tests_only = "--tests-only" in argv
    skip_tests = "--skip-tests" in argv
    pytest_args = [a for a in argv if a not in ("--tests-only", "--skip-tests")]
    ensure_debian_tools(postgres=not skip_tests)
    python_exe = ensure_windows_python(host_python)
    summary: dict[str, Any] = {"lane": "windows"}
    ok = True
    if not skip_tests:
        tests = run_tests(python_exe, pytest_args)
        summary.update(tests_passed=tests["passed"], tests_failed=tests["failed"] + tests["errors"],
                       tests_skipped=tests["skipped"], tests_on_postgresql=tests["postgresql_passed"],
                       tests_seconds=tests["seconds"], tests_failures=tests["failures"])
        ok = tests["exit_code"] == 0
        # The whole suite holds PostgreSQL tests: none passing means they did not run (never a skip).
        # Options alone (-v, -x, -rfE...) still run the whole suite; paths or -k select a part.
        if whole_suite(pytest_args) and tests["postgresql_passed"] == 0:
            ok = False
    if not tests_only:
        setup = installer.output()
        if not setup.exists():
            setup = installer.build(bundle.build(python_exe))
        summary["installer_mb"] = round(setup.stat().st_size / 2**20, 1)
        ok = check_setup(setup, summary) and ok
    summary["wall_seconds"] = round(time.monotonic() - started)
    summary["ok"] = ok
    print(json.dumps(summary, ensure_ascii=False), flush=True)
    return 0 if ok else 1


def whole_suite(pytest_args: list[str]) -> bool:
    """No test paths, node ids or -k/-m among the arguments: pytest runs every test."""
    selecting = {"-k", "-m", "--lf", "--last-failed", "--deselect"}
    return not any(
        a in selecting or a.startswith(("-k", "-m", "--deselect")) or not a.startswith("-") for a in pytest_args
    )


def check_setup(setup: Path, summary: dict[str, Any]) -> bool:
    prefix = PREFIXES / os.environ.get("CAPTURA_LANE_PREFIX", "prefix-install")
    wine = Wine(prefix)
    if not native():
        wine.kill()
        shutil.rmtree(prefix, ignore_errors=True)  # a fresh Windows user every run
        wine.create()
        standins.install(wine.drive_c)
    found = check_installed(wine, setup)
    program = found["program"]
    summary.update(installed=program is not None, shortcut=found["shortcut"],
                   uninstall_entry_version=found["uninstall_entry_version"], autostart=found["autostart"])
    if program is None:
        return False
    helped = wine.run([program, "--help"], timeout=600, check=False)
    summary["help_ok"] = helped.returncode == 0 and "capture" in helped.stdout and "--tray" in helped.stdout
    demo = run_demo(wine, program)
    summary.update(demo_verdict=demo["verdict"], demo_violations=demo["violations"], demo_documents=demo["documents"])
    data_dir = wine.user_dir() / "AppData" / "Local" / "CapturaDFe-demo"
    uninstaller = program.parent / "Desinstalar.exe"
    wine.run([uninstaller, "/S"], timeout=600, check=False)
    wine.wait()
    for _ in range(60):  # the uninstaller runs a copy of itself from %TEMP% and returns at once
        if not program.exists():
            break
        time.sleep(1)
    summary["uninstalled"] = not program.exists() and not (program.parent / "_internal").exists()
    summary["uninstall_left_data"] = data_dir.is_dir() and any(data_dir.iterdir())
    wine.kill()
    return bool(summary["help_ok"] and demo["verdict"] == "ok" and summary["uninstalled"]
                and summary["uninstall_left_data"] and found["shortcut"] and found["uninstall_entry_version"])


def build(host_python: Path) -> int:
    ensure_debian_tools()
    python_exe = ensure_windows_python(host_python)
    started = time.monotonic()
    setup = installer.build(bundle.build(python_exe))
    print(f"Instalador: {setup} ({setup.stat().st_size / 2**20:.1f} MB, {time.monotonic() - started:.0f} s)")
    return 0
