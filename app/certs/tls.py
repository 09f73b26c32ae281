"""Mutual TLS with an A1 certificate, without the private key ever touching a disk in clear.

``ssl.SSLContext.load_cert_chain`` only reads files. The key is therefore re-encrypted with a
random one-time passphrase and handed over through an anonymous memory file (Linux
``memfd_create``) or, elsewhere, a 0600 ``mkstemp`` file that is unlinked right after loading.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from app.certs.a1 import A1Certificate
from app.core.errors import CapturaError


class TrustBundleError(CapturaError):
    """The configured CA bundle is missing or holds no certificate."""


def client_ssl_context(a1: A1Certificate, *, cafile: Path | None = None, cadata: bytes | None = None) -> ssl.SSLContext:
    """A TLS >= 1.2 client context presenting ``a1`` and verifying the server (hostname included).

    ``cafile``/``cadata`` (PEM) pin the trusted CAs; with neither, the OS trust store is used.
    Pass the result to httpx as ``verify=`` (httpx 0.28 deprecates ``cert=``).
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = True
    ctx.verify_mode = ssl.CERT_REQUIRED
    if cafile is None and cadata is None:
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        text = cadata.decode("ascii") if cadata is not None and b"-----BEGIN" in cadata else cadata
        ctx.load_verify_locations(cafile=cafile, cadata=text)
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
    return hasattr(os, "memfd_create")


def _load_via_memfd(ctx: ssl.SSLContext, pem: bytes, password: bytes) -> bool:
    """Loads through an anonymous memory file; False when the system cannot offer one."""
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
    - Real services: ``icp_brasil_bundle`` is a PEM file with the ICP-Brasil chain the SEFAZ and
      national-environment servers present. To build it, download the root certificates
      ("AC Raiz ICP-Brasil" v5, v10...) and the intermediate CAs of the servers' issuers (for
      example "AC SERPRO", "AC SOLUTI", "AC VALID") from the ITI repository
      (https://acraiz.icpbrasil.gov.br, "Repositório" / "Certificados"), convert any DER/.crt
      file to PEM (``openssl x509 -inform der -in ac.crt -out ac.pem``) and concatenate them all
      into one file.
    - Neither: the operating system's store. It has the public web CAs but usually not the
      ICP-Brasil roots, so the SEFAZ services fail verification without the bundle.
    """
    chosen = sandbox_ca_file or icp_brasil_bundle
    if chosen is None:
        return Trust()
    try:
        text = chosen.read_bytes()
    except OSError:
        raise TrustBundleError(
            f"Arquivo da cadeia de certificados não encontrado: {chosen}. Baixe os certificados da "
            "ICP-Brasil em https://acraiz.icpbrasil.gov.br e indique o arquivo PEM nas configurações."
        ) from None
    if b"-----BEGIN CERTIFICATE-----" not in text:
        raise TrustBundleError(
            f"O arquivo {chosen} não contém certificados no formato PEM (blocos -----BEGIN CERTIFICATE-----)."
        )
    return Trust(cafile=chosen)
