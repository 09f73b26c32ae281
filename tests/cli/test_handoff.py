"""`handoff`: configure, run against a real loopback receiver, read the log, resend by key."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import keyring
import pytest

from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[str]]]:
    keys: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            keys.append(self.headers["Idempotency-Key"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", keys
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_set_run_log_and_resend(harness: Harness, cli: Cli, endpoint: tuple[str, list[str]]) -> None:
    url, received = endpoint
    assert cli("handoff", "set", RECIPIENT, url) == 0, cli.err
    secret = keyring.get_password("CapturaDFe", f"handoff:{RECIPIENT}")
    assert secret and secret in cli.out  # shown once, to copy into the ERP
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    harness.run_pending()

    assert cli("handoff", "run") == 0, cli.out
    assert received == [f"{RECIPIENT}:{key}:resNFe:1"]
    [entry] = cli.json("handoff", "log")  # type: ignore[misc]
    assert entry["status"] == "delivered" and entry["http_status"] == 204
    assert secret not in cli.out  # the log never shows the secret

    assert cli("handoff", "resend", RECIPIENT, "--key", key) == 0 and "1 envio(s)" in cli.out
    assert cli("handoff", "run") == 0
    assert received == [f"{RECIPIENT}:{key}:resNFe:1"] * 2  # same idempotency key: the ERP keeps one
    assert cli("handoff", "resend", RECIPIENT) == 1 and "Informe --key" in cli.err
    assert cli("handoff", "set", RECIPIENT, "ftp://x") == 1 and "Endereço inválido" in cli.err
