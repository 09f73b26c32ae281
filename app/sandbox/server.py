"""The sandbox over real HTTPS with mutual TLS on loopback (stdlib ThreadingHTTPServer + ssl).

The TLS handshake runs in the connection's thread (not in ``accept``) so a silent client cannot
stall the server. ``stop`` shuts every open connection down and joins the threads with a timeout.
"""

from __future__ import annotations

import logging
import socket
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from app.sandbox.router import Router
from app.sandbox.wire import ANONYMOUS, Caller, SandboxRequest, caller_from_der

log = logging.getLogger(__name__)
MAX_BODY = 4 * 1024 * 1024


def server_context(cert_pem: bytes, key_pem: bytes, ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=ca_pem.decode("ascii"))
    with tempfile.TemporaryDirectory(prefix="sandbox-tls-") as folder:
        chain = Path(folder) / "server.pem"
        chain.write_bytes(cert_pem + b"\n" + key_pem)  # test key, deleted right after loading
        context.load_cert_chain(str(chain))
    return context


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 30  # idle keep-alive connections end after this
    server: SandboxHttpsServer
    server_version = "Microsoft-IIS/10.0"
    sys_version = ""

    def setup(self) -> None:
        conn: ssl.SSLSocket = self.request
        conn.settimeout(10)
        conn.do_handshake()  # raises on a missing/untrusted client certificate: connection refused
        super().setup()

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def _caller(self) -> Caller:
        der = self.connection.getpeercert(binary_form=True)
        return self.server.caller_for(der) if der else ANONYMOUS

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        req = SandboxRequest(
            method=self.command,
            path=url.path,
            query=dict(parse_qsl(url.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            caller=self._caller(),
        )
        response = self.server.router.dispatch(req)
        if response.fault == "timeout":
            self.server.stopping.wait(response.stall_seconds)  # a real stall, cut short by stop()
            self.close_connection = True
            return
        if response.fault == "close":
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("sandbox %s - %s", self.address_string(), format % args)


class SandboxHttpsServer(ThreadingHTTPServer):
    """Serves a :class:`Router` over HTTPS, requiring a client certificate from the test CA."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], router: Router, context: ssl.SSLContext) -> None:
        super().__init__(address, _Handler)
        self.router = router
        self.ssl_context = context
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._conn_threads: list[threading.Thread] = []
        self._callers: dict[bytes, Caller] = {}
        self._lock = threading.Lock()
        self._serve_thread: threading.Thread | None = None

    def caller_for(self, der: bytes) -> Caller:
        with self._lock:
            caller = self._callers.get(der)
            if caller is None:
                caller = self._callers[der] = caller_from_der(der)
            return caller

    def get_request(self) -> tuple[Any, Any]:
        sock, address = self.socket.accept()
        wrapped = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        with self._lock:
            self._open.add(wrapped)
        return wrapped, address

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            daemon=True,
            name="sandbox-https-conn",
        )
        with self._lock:
            self._conn_threads = [t for t in self._conn_threads if t.is_alive()]
            self._conn_threads.append(thread)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("sandbox connection from %s ended with an error", client_address, exc_info=True)

    def start(self) -> None:
        self._serve_thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="sandbox-https"
        )
        self._serve_thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        self.shutdown()
        with self._lock:
            open_sockets = list(self._open)
            threads = list(self._conn_threads)
        for sock in open_sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()
        if self._serve_thread is not None:
            self._serve_thread.join(timeout)
        for thread in threads:
            thread.join(timeout)
