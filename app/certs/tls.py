"""Mutual TLS with an A1 certificate, without the private key ever touching a disk in clear.

``ssl.SSLContext.load_cert_chain`` only reads files. The key is therefore re-encrypted with a
random one-time passphrase (kept in memory only) and handed over through an anonymous memory file
(Linux ``memfd_create``) or, elsewhere (Windows), a 0600 ``mkstemp`` file in the user's own
temporary folder that is unlinked right after loading: what touches the disk there is the
encrypted key, never the key in clear.

The servers are verified against the configured chain (any form the ITI publishes, read by
:mod:`app.certs.bundle`) or, without one, the operating system's store; on Windows that is the
Windows certificate store itself (through ``truststore``, which lets Windows build the chain and
fetch a root it trusts on demand), so an office whose Windows has the ICP-Brasil roots needs no file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import ssl
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from app.certs.a1 import A1Certificate
from app.certs.bundle import TrustBundleError, read_bundle

__all__ = ["Trust", "TrustBundleError", "client_ssl_context", "trust_from_settings"]

# Where the OS store is asked through truststore (its own chain building and root updates).
_NATIVE_STORE_PLATFORMS = ("win32", "darwin")


def client_ssl_context(
    a1: A1Certificate,
    *,
    cafile: Path | None = None,
    cadata: bytes | None = None,
    platform: str = sys.platform,
) -> ssl.SSLContext:
    """A TLS >= 1.2 client context presenting ``a1`` and verifying the server (hostname included).

    ``cafile`` (a .p7b, a zip of .crt, a .pem or a .crt) or ``cadata`` (PEM or DER) pin the
    trusted CAs; with neither, the OS trust store is used (on Windows, the Windows store).
    Pass the result to httpx as ``verify=`` (httpx 0.28 deprecates ``cert=``).
    """
    native = cafile is None and cadata is None and platform in _NATIVE_STORE_PLATFORMS
    if native:
        import truststore  # the OS verifies: no certificates are loaded into OpenSSL

        ctx: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = True
    ctx.verify_mode = ssl.CERT_REQUIRED
    if cafile is not None:
        ctx.load_verify_locations(cadata=read_bundle(cafile).decode("ascii"))
    elif cadata is not None:
        ctx.load_verify_locations(cadata=cadata.decode("ascii") if b"-----BEGIN" in cadata else cadata)
    elif not native:
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    one_time = secrets.token_bytes(32)
    pem = a1.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time),
    )
    pem += a1.certificate.public_bytes(serialization.Encoding.PEM)
    pem += b"".join(c.public_bytes(serialization.Encoding.PEM) for c in a1.chain)
    if not (_memfd_available() and _load_via_memfd(ctx, pem, one_time)):
        _load_via_tempfile(ctx, pem, one_time)
    return ctx


def _memfd_available() -> bool:
    return sys.platform == "linux" and hasattr(os, "memfd_create")


def _load_via_memfd(ctx: ssl.SSLContext, pem: bytes, password: bytes) -> bool:
    """Loads through an anonymous memory file; False when the system cannot offer one."""
    if sys.platform != "linux":  # Linux only (and mypy for Windows must not see the call)
        return False
    try:
        fd = os.memfd_create("captura-a1", os.MFD_CLOEXEC)
    except OSError:
        return False
    try:
        path = f"/proc/self/fd/{fd}"
        if not os.path.exists(path):  # /proc not mounted (some containers)
            return False
        view = memoryview(pem)
        while view:
            view = view[os.write(fd, view) :]
        ctx.load_cert_chain(path, password=lambda: password)
        return True
    finally:
        os.close(fd)


def _load_via_tempfile(ctx: ssl.SSLContext, pem: bytes, password: bytes) -> None:
    # mkstemp: 0600 on POSIX, the user's own %TEMP% on Windows; closed before OpenSSL opens it
    fd, path = tempfile.mkstemp(prefix="captura-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        ctx.load_cert_chain(path, password=lambda: password)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


@dataclass(frozen=True)
class Trust:
    """Which certificate authorities the client accepts for the servers it calls."""

    cafile: Path | None = None

    @property
    def uses_system_store(self) -> bool:
        return self.cafile is None

    def client_context(self, a1: A1Certificate) -> ssl.SSLContext:
        return client_ssl_context(a1, cafile=self.cafile)


def trust_from_settings(*, icp_brasil_bundle: Path | None = None, sandbox_ca_file: Path | None = None) -> Trust:
    """The server trust for the configured environment.

    - Sandbox: ``sandbox_ca_file`` is the sandbox's own test CA (any PEM bundle); it wins.
    - Real services: ``icp_brasil_bundle`` is the ICP-Brasil chain the SEFAZ and
      national-environment servers present, as the ITI publishes it (https://acraiz.icpbrasil.gov.br,
      "Repositório": the ``.p7b`` or the ``.zip`` of ``.crt`` files) or any PEM bundle.
    - Neither: the operating system's store. On Windows that is the Windows store (it trusts the
      ICP-Brasil roots when they are installed there); elsewhere it usually lacks them.
    """
    chosen = sandbox_ca_file or icp_brasil_bundle
    if chosen is None:
        return Trust()
    read_bundle(chosen)  # refused now, with its reason, rather than at the first connection
    return Trust(cafile=chosen)
