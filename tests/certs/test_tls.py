from __future__ import annotations

import json
import os
import ssl
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization

from app.certs import tls
from app.certs.a1 import A1Certificate, load_a1
from app.certs.tls import Trust, TrustBundleError, client_ssl_context, trust_from_settings
from app.certs.vault import CertificateVault
from app.sandbox.pki import IssuedCert, TestPki


class _EchoClientCn(BaseHTTPRequestHandler):
    """Answers with the common name of the client certificate the TLS layer verified."""

    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        peer = self.connection.getpeercert()
        cn = next(value for rdn in peer["subject"] for key, value in rdn if key == "commonName")
        body = json.dumps({"client_cn": cn}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def mtls_server(pki: TestPki, tmp: Path, hostnames: tuple[str, ...] = ("127.0.0.1",)) -> Iterator[str]:
    server_cert = pki.server_cert(hostnames)
    (tmp / "server.pem").write_bytes(server_cert.cert_pem + server_cert.key_pem)  # test material
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp / "server.pem")
    (tmp / "server.pem").unlink()
    ctx.load_verify_locations(cadata=pki.ca_cert_pem.decode())
    ctx.verify_mode = ssl.CERT_REQUIRED
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoClientCn)
    server.daemon_threads = True
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert not thread.is_alive()


@pytest.fixture
def a1(company: IssuedCert) -> A1Certificate:
    return load_a1(company.pfx, company.password, now=datetime.now(UTC))


@pytest.fixture
def server_url(pki: TestPki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mtls_server(pki, tmp_path_factory.mktemp("server")) as url:
        yield url


def get_cn(url: str, verify: ssl.SSLContext) -> str:
    with httpx.Client(verify=verify, timeout=httpx.Timeout(10)) as client:
        response = client.get(url)
    response.raise_for_status()
    return str(response.json()["client_cn"])


def test_context_settings(a1: A1Certificate, pki: TestPki) -> None:
    ctx = client_ssl_context(a1, cadata=pki.ca_cert_pem)
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname is True


def test_mutual_tls_round_trip(a1: A1Certificate, pki: TestPki, server_url: str, tmp_path: Path) -> None:
    assert get_cn(server_url, client_ssl_context(a1, cadata=pki.ca_cert_pem)) == ("EMPRESA TESTE LTDA:12345678000195")
    (tmp_path / "ca.pem").write_bytes(pki.ca_cert_pem)
    assert get_cn(server_url, client_ssl_context(a1, cafile=tmp_path / "ca.pem")).endswith(":12345678000195")


def test_client_without_certificate_is_refused(pki: TestPki, server_url: str) -> None:
    no_cert = ssl.create_default_context(cadata=pki.ca_cert_pem.decode())
    with pytest.raises(httpx.TransportError) as caught:
        get_cn(server_url, no_cert)
    assert "CERTIFICATE_REQUIRED" in str(caught.value).upper()


def test_client_certificate_from_another_ca_is_refused(pki: TestPki, server_url: str) -> None:
    stranger = TestPki.create().company_cert("12345678000195", "EMPRESA TESTE LTDA")
    a1 = load_a1(stranger.pfx, "1234", now=datetime.now(UTC))
    with pytest.raises(httpx.TransportError) as caught:
        get_cn(server_url, client_ssl_context(a1, cadata=pki.ca_cert_pem))
    assert "UNKNOWN_CA" in str(caught.value).upper()


def test_server_is_verified(a1: A1Certificate, pki: TestPki, server_url: str, tmp_path: Path) -> None:
    other_ca = TestPki.create().ca_cert_pem
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        get_cn(server_url, client_ssl_context(a1, cadata=other_ca))
    with mtls_server(pki, tmp_path, hostnames=("localhost",)) as wrong_name_url:
        with pytest.raises(httpx.ConnectError, match="IP address mismatch"):
            get_cn(wrong_name_url, client_ssl_context(a1, cadata=pki.ca_cert_pem))


def _walk_files(*roots: Path) -> list[Path]:
    return [Path(d) / name for root in roots for d, _, names in os.walk(root) for name in names]


# "tempfile" is Windows' path (no memfd_create there): only the encrypted key reaches %TEMP%.
@pytest.mark.parametrize("use_memfd", [False, True], ids=["tempfile", "memfd"])
def test_no_private_key_in_clear_anywhere(
    use_memfd: bool,
    company: IssuedCert,
    pki: TestPki,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if use_memfd and not hasattr(os, "memfd_create"):
        pytest.skip("memfd_create is Linux only")
    temp_root = tmp_path / "temp"
    temp_root.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp_root))
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    monkeypatch.setattr(tls, "_memfd_available", lambda: use_memfd)

    seen: list[tuple[str, bytes, int]] = []
    original = ssl.SSLContext.load_cert_chain

    def spy(self: ssl.SSLContext, certfile: Any, keyfile: Any = None, password: Any = None) -> None:
        path = os.fspath(certfile)
        seen.append((path, Path(path).read_bytes(), os.stat(path).st_mode & 0o777))
        original(self, certfile, keyfile, password)

    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain", spy)

    vault = CertificateVault(data_dir)
    vault.store(company.pfx, company.password, datetime.now(UTC))
    a1 = vault.load("12345678000195", datetime.now(UTC))
    server_files = tmp_path / "server-files"
    server_files.mkdir()
    with mtls_server(pki, server_files) as url:
        assert get_cn(url, client_ssl_context(a1, cadata=pki.ca_cert_pem)).endswith(":12345678000195")
        assert get_cn(url, trust_from_settings(sandbox_ca_file=_ca_file(pki, tmp_path)).client_context(a1))

    client_loads = [entry for entry in seen if b"ENCRYPTED PRIVATE KEY" in entry[1]]
    assert len(client_loads) == 2
    for path, content, mode in client_loads:
        assert b"-----BEGIN PRIVATE KEY-----" not in content and b"BEGIN RSA PRIVATE KEY" not in content
        if use_memfd:
            assert path.startswith("/proc/self/fd/")
        else:
            assert Path(path).parent == temp_root
            if os.name == "posix":
                assert mode == 0o600

    assert list(temp_root.iterdir()) == []  # every temporary file is gone
    key = serialization.load_pem_private_key(company.key_pem, password=None)
    ders = [
        key.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
        for fmt in (serialization.PrivateFormat.PKCS8, serialization.PrivateFormat.TraditionalOpenSSL)
    ]
    files = _walk_files(data_dir, temp_root, Path(tempfile.gettempdir()))
    assert files  # the vault's file at least
    for file in files:
        content = file.read_bytes()
        assert b"-----BEGIN PRIVATE KEY-----" not in content, file
        assert b"BEGIN RSA PRIVATE KEY" not in content, file
        assert not any(der in content for der in ders), file


def _ca_file(pki: TestPki, folder: Path) -> Path:
    path = folder / "sandbox-ca.pem"
    path.write_bytes(pki.ca_cert_pem)
    return path


def test_memfd_failure_falls_back_to_tempfile(
    a1: A1Certificate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "memfd_create"):
        pytest.skip("memfd_create is Linux only")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def broken(name: str, flags: int = 0) -> int:
        raise OSError("memfd indisponível")

    made: list[str] = []
    real_mkstemp = tempfile.mkstemp

    def recording_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, path = real_mkstemp(*args, **kwargs)
        made.append(path)
        return fd, path

    monkeypatch.setattr(os, "memfd_create", broken)
    monkeypatch.setattr(tempfile, "mkstemp", recording_mkstemp)
    ctx = client_ssl_context(a1)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert len(made) == 1 and Path(made[0]).parent == tmp_path
    assert list(tmp_path.iterdir()) == []


def test_trust_from_settings(tmp_path: Path, pki: TestPki) -> None:
    assert trust_from_settings() == Trust()
    assert Trust().uses_system_store

    icp = tmp_path / "icp-brasil.pem"
    icp.write_bytes(pki.ca_cert_pem)
    sandbox = _ca_file(pki, tmp_path)
    assert trust_from_settings(icp_brasil_bundle=icp) == Trust(cafile=icp)
    assert trust_from_settings(icp_brasil_bundle=icp, sandbox_ca_file=sandbox).cafile == sandbox

    with pytest.raises(TrustBundleError) as caught:
        trust_from_settings(icp_brasil_bundle=tmp_path / "faltando.pem")
    assert caught.value.message.startswith("Não foi possível ler o arquivo da cadeia de certificados")
    assert "acraiz.icpbrasil.gov.br" in caught.value.message

    (tmp_path / "vazio.pem").write_text("nada aqui")
    with pytest.raises(TrustBundleError, match=r"não contém certificados reconhecíveis.*p7b"):
        trust_from_settings(icp_brasil_bundle=tmp_path / "vazio.pem")
