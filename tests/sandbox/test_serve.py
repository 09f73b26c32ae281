"""``sandbox serve``: PKI and settings written, the app's settings point at a live sandbox."""

from __future__ import annotations

import argparse
import json
import ssl
import threading
from pathlib import Path

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from app.config.endpoints import Environment, Service
from app.config.settings import load_settings
from app.core.clock import FakeClock
from app.sandbox.sandbox import Sandbox
from app.sandbox.scenario import ScenarioRun
from app.sandbox.serve import add_arguments, serve


def test_serve_writes_pki_and_settings_and_stops(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    data_dir, pki_dir = tmp_path / "data", tmp_path / "pki"
    args = parser.parse_args(["--port", "0", "--pki-dir", str(pki_dir), "--write-settings", str(data_dir)])
    stop, ready = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def on_ready(sandbox: Sandbox, run: ScenarioRun) -> None:
        seen["urls"], seen["companies"] = sandbox.urls, run.companies
        ready.set()

    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(serve(args, stop=stop, ready=on_ready, clock=FakeClock())))
    thread.start()
    try:
        assert ready.wait(20)
        settings = load_settings(data_dir)
        endpoint = settings.endpoint(Service.NFE_DISTRIBUICAO, Environment.HOMOLOGACAO)
        assert endpoint.url == seen["urls"]["nfe_dist"]  # type: ignore[index]
        assert endpoint.ca_bundle is not None and endpoint.ca_bundle.read_bytes().startswith(b"-----BEGIN")
        companies = seen["companies"]
        assert isinstance(companies, list) and len(companies) == 3
        assert all((pki_dir / f"{cnpj}.pfx").is_file() for cnpj in companies)
        # the files on disk are enough for a plain client: CA bundle + a company's .pfx
        entry = json.loads((pki_dir / "companies.json").read_text(encoding="utf-8"))[0]
        key, cert, _ = pkcs12.load_key_and_certificates(
            (pki_dir / entry["pfx"]).read_bytes(), entry["password"].encode()
        )
        assert key is not None and cert is not None
        (tmp_path / "k.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        (tmp_path / "c.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        context = ssl.create_default_context(cafile=str(endpoint.ca_bundle))
        context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
        body = (
            '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>'
            '<distDFeInt xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.01"><tpAmb>2</tpAmb>'
            f"<CNPJ>{entry['cnpj']}</CNPJ><distNSU><ultNSU>000000000000000</ultNSU></distNSU></distDFeInt>"
            "</soap:Body></soap:Envelope>"
        )
        with httpx.Client(verify=context) as c:
            response = c.post(endpoint.url, content=body)
        assert b"<cStat>138</cStat>" in response.content  # the default backlog: documents waiting
    finally:
        stop.set()
        thread.join(20)
    assert not thread.is_alive() and result == [0]
