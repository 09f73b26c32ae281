"""The HTTPS server: mutual TLS is required, the caller is its certificate, stop() really stops."""

from __future__ import annotations

import socket
import ssl
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.clock import FakeClock
from app.sandbox.pki import IssuedCert, TestPki
from app.sandbox.sandbox import Sandbox


def test_a_connection_without_client_certificate_is_refused(https: Sandbox, client_for: Any, h: Any) -> None:
    with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
        client_for(None).post(h.DIST_PATH, content=h.dist_envelope(ult=0))
    assert https.referee.requests == []


def test_a_certificate_from_another_ca_is_refused(https: Sandbox, tmp_path: Path, h: Any) -> None:
    foreign = TestPki.create().company_cert(h.RECIPIENT, "INTRUSA")
    with (
        h.mtls_client(https, foreign, tmp_path) as c,
        pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)),
    ):
        c.post(h.DIST_PATH, content=h.dist_envelope(ult=0))


def test_593_for_a_foreign_certificate_over_https(https: Sandbox, client_for: Any, h: Any) -> None:
    other = https.company(h.OTHER, "OUTRA EMPRESA")
    answer = h.read_dist(client_for(other).post(h.DIST_PATH, content=h.dist_envelope(h.RECIPIENT, ult=0)))
    assert answer.cstat == 593
    assert https.referee.requests[-1].caller_doc == h.OTHER  # identified by its certificate


def test_keep_alive_and_stop_joins_everything(clock: FakeClock, tmp_path: Path, h: Any) -> None:
    sandbox = Sandbox(clock)
    cert = sandbox.company(h.RECIPIENT, "DESTINATARIA")
    sandbox.start_https()
    host, port = "127.0.0.1", int((sandbox.base_url or "").rsplit(":", 1)[1])
    with h.mtls_client(sandbox, cert, tmp_path) as c:
        for _ in range(3):  # one connection, several requests
            assert c.post(h.DIST_PATH, content=h.dist_envelope(ult=0)).status_code == 200
            clock.advance(timedelta(hours=2))
        sandbox.stop(timeout=5)
    with pytest.raises(OSError), socket.create_connection((host, port), timeout=1):
        pass


def test_server_speaks_tls12_or_better(https: Sandbox, recipient_cert: IssuedCert, tmp_path: Path) -> None:
    context = ssl.create_default_context(cadata=https.ca_cert_pem.decode())
    (tmp_path / "c.pem").write_bytes(recipient_cert.cert_pem)
    (tmp_path / "k.pem").write_bytes(recipient_cert.key_pem)
    context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    host, port = "127.0.0.1", int((https.base_url or "").rsplit(":", 1)[1])
    with (
        socket.create_connection((host, port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=host) as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_an_expired_certificate_is_refused_both_ways(https: Sandbox, tmp_path: Path, h: Any) -> None:
    from datetime import UTC, datetime

    expired = https.company(h.RECIPIENT, "VENCIDA", not_after=datetime.now(UTC) - timedelta(days=2))
    with (
        h.mtls_client(https, expired, tmp_path) as c,
        pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)),
    ):
        c.post(h.DIST_PATH, content=h.dist_envelope(ult=0))
    # in-process, validity is judged on the sandbox clock (so a simulated month can see a cert expire)
    clock = https.clock
    assert isinstance(clock, FakeClock)
    clock.set(datetime.now(UTC))
    with httpx.Client(transport=https.transport(expired), base_url="https://x") as c, pytest.raises(httpx.ConnectError):
        c.post(h.DIST_PATH, content=h.dist_envelope(ult=0))
