"""`status` from another process while the demo runs reads the demo's truth, not its own vault."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.core.products import Product
from app.demo.environment import DemoEnvironment, DemoOptions
from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _status(data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # Another process, as a person would type it: the demo's certificates live only in the
    # demo's memory, and this process's keyring knows nothing of them.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON_KEYRING")}
    return subprocess.run(
        [sys.executable, "main.py", "--data-dir", str(data_dir), "status", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_status_elsewhere_shows_the_demo_state_and_who_captures(tmp_path: Path) -> None:
    demo_dir = tmp_path / "dados-demo"
    # Without the demo's other consumer: at x600 it reads the first company's NF-e 7.5 real
    # seconds in (75 virtual minutes), and a slow `status` process (under Wine, 10 s and more)
    # would then rightly report its 656. That state has its own test (test_other_consumer.py here).
    env = DemoEnvironment(demo_dir, DemoOptions(speed=600, companies=2, other_consumer_after_minutes=None))
    env.start()
    try:
        assert env.ctx is not None
        ctx = env.ctx
        wait_until(
            lambda: (
                all(s.last_query_at for s in ctx.cursors.list_states(Product.NFE))
                and len(ctx.cursors.list_states(Product.NFE)) == 2
            ),
            timeout=60,
        )
        result = _status(demo_dir, "--json")
        assert result.returncode == 0, result.stderr
        statuses = json.loads(result.stdout)
        assert len(statuses) == 6  # two companies, NF-e, CT-e and NFS-e each
        for status in statuses:
            assert status["label"] != "Desativada", status
            assert "cofre" not in status["reason"]
            # SOAP cStat for NF-e/CT-e; the ADN's code (E2220: empty queue) or none yet for NFS-e
            assert status["last_cstat"] in ("137", "138") or status["product"] == "nfse", status

        text = _status(demo_dir)
        assert text.returncode == 0, text.stderr
        assert "A captura desta pasta está com: demonstração do Captura DF-e, PID" in text.stdout
        assert "Desativada" not in text.stdout
    finally:
        env.stop()
