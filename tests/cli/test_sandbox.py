"""The README's sandbox walkthrough, run as written: serve, then company add and capture --once
in other processes, with the commands `serve` prints."""

from __future__ import annotations

import os
import queue
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _main(line: str) -> tuple[list[str], Path | None]:
    """``python main.py ... [< file]`` as an argv for this interpreter and the stdin file."""
    command, _, stdin = line.partition(" < ")
    words = shlex.split(command, posix=os.name != "nt")  # Windows: backslashes are separators, not escapes
    assert words[:2] == ["python", "main.py"], line
    return [sys.executable, str(ROOT / "main.py"), *words[2:]], Path(stdin.strip()) if stdin else None


def test_the_walkthrough_gets_documents_on_the_first_once(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHON_KEYRING_BACKEND="tests.support.test_keyring.TestKeyring")  # XDG_* point at tmp
    serve = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "sandbox",
            "serve",
            "--port",
            "0",
            "--pki-dir",
            "./pki",
            "--write-settings",
            "./dados-sandbox",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert serve.stdout is not None
    stdout = serve.stdout
    reader = threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True)
    reader.start()
    printed: list[str] = []

    def ready() -> bool:
        while not lines.empty():
            printed.append(lines.get().rstrip("\n"))
        return any(line.startswith("Ctrl+C") for line in printed) or serve.poll() is not None

    try:
        wait_until(ready, timeout=60)
        out = "\n".join(printed)
        assert serve.poll() is None, out
        # Paths as the platform writes them: what the user types back (pki\companies.json on Windows).
        pki = Path("pki")
        assert str(pki / "companies.json") in out and str(pki / "senha-de-teste.txt") in out
        assert str(Path("dados-sandbox") / "settings.json") in out
        commands = printed[printed.index("Em outro terminal:") + 1 :][:2]
        add, stdin = _main(commands[0].strip())
        assert stdin is not None and (tmp_path / stdin).is_file()
        with (tmp_path / stdin).open() as password:
            added = subprocess.run(
                add, cwd=tmp_path, env=env, stdin=password, capture_output=True, text=True, timeout=120
            )
        assert added.returncode == 0, added.stderr
        once, _ = _main(commands[1].strip())
        first = subprocess.run(once, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert first.returncode == 0, first.stderr
        found = re.search(r"1 consulta\(s\), (\d+) documento\(s\)", first.stdout)
        assert found and int(found.group(1)) > 0, first.stdout
        # The README names the first company's file: the same the simulator writes.
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        [named] = set(re.findall(r"--pfx \./pki/(\d{14})\.pfx", readme))
        assert str(pki / f"{named}.pfx") in commands[0]
    finally:
        serve.terminate()
        serve.wait(30)
        reader.join(30)
        stdout.close()
