"""The newcomer's command, end to end: `python main.py --demo --headless` in a child process."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.demo.environment import DemoOptions
from app.demo.headless import run_headless
from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_demo_headless_captures_with_no_violation_and_leaves_the_real_folder_alone(tmp_path: Path) -> None:
    real = tmp_path / "dados"
    env = dict(os.environ, CAPTURA_DATA_DIR=str(real), PYTHONUNBUFFERED="1")
    result = subprocess.run(
        [sys.executable, "main.py", "--demo", "--headless", "--duration", "24", "--speed", "600"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 0, result.stderr + out
    assert "documento(s) de NF-e recebido(s)" in out
    assert "Ciência da Operação registrada" in out
    assert "Em espera" in out and "até" in out  # the one-hour wait, shown and respected
    assert "Árbitro: 0 violações" in out
    # Issue 22: another system took the first company's NF-e; our next query met the 656, the state
    # said so, and once the block was over what it took came back by consNSU.
    assert "Bloqueada: SEFAZ bloqueou consultas até" in out and "cStat 656" in out
    assert "EMPRESA CLIENTE 001 LTDA: Outro sistema está consultando as NF-e desta empresa" in out
    other = re.search(r"Outro sistema com o mesmo certificado levou (\d+) NSU de NF-e; (\d+) voltaram", out)
    assert other is not None, out
    taken, back = int(other.group(1)), int(other.group(2))
    # At least an hour's quota of point queries (20) came back, or all of them when fewer were taken;
    # how many the other system took depends on how far the demo's clock ran before its read.
    assert taken > 0 and min(taken, 20) <= back <= taken, other.group(0)
    stored = re.search(r"Documentos guardados: (\d+) \((\d+) NF-e completas", out)
    assert stored is not None, out
    assert int(stored.group(1)) > 0
    assert int(stored.group(2)) > 0  # a resumo became a complete NF-e after the Ciência
    assert not real.exists()  # only the -demo folder was created
    demo = tmp_path / "dados-demo"
    assert (demo / "captura.sqlite3").is_file() and (demo / "logs" / "captura.log").is_file()
    assert b"PRIVATE KEY" not in (demo / "logs" / "captura.log").read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM to oneself is a POSIX test")
def test_sigterm_ends_the_headless_demo_gracefully(tmp_path: Path) -> None:
    out = io.StringIO()
    result: list[int] = []

    def terminate_when_documents_arrive() -> None:
        try:
            wait_until(lambda: "documento(s) de NF-e recebido(s)" in out.getvalue(), timeout=30)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=terminate_when_documents_arrive)
    helper.start()
    try:
        result.append(run_headless(tmp_path / "dados-demo", DemoOptions(speed=600), out=out, status_every=0.5))
    finally:
        helper.join(10)
    text = out.getvalue()
    assert result == [0], text
    assert "Parando o serviço de captura" in text and "Árbitro: 0 violações" in text
    assert "EMPRESA CLIENTE 001 LTDA" in text
