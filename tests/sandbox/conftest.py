"""Shared fixtures for the sandbox service tests: a sandbox on a FakeClock, mTLS httpx clients,
and helpers that build requests and read answers with plain lxml (never the app's own clients)."""

from __future__ import annotations

import base64
import gzip
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from lxml import etree

from app.core.clock import FakeClock, brasilia_iso
from app.fiscal.xmldsig import sign_enveloped
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
NFE = "http://www.portalfiscal.inf.br/nfe"
CTE = "http://www.portalfiscal.inf.br/cte"
DIST_PATH = "/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx"
CTE_PATH = "/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx"
EVENT_PATH = "/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx"

RECIPIENT = "11222333000181"  # the app's client company
BRANCH = "11222333000262"  # same base, another establishment
SUPPLIER = "99888777000100"
OTHER = "44555666000181"  # another company, another base


def dist_envelope(
    cnpj: str = RECIPIENT,
    *,
    ult: int | None = None,
    nsu: int | None = None,
    key: str | None = None,
    tp_amb: int = 2,
    product: str = "nfe",
    cpf: str | None = None,
) -> bytes:
    ns, versao, wsdl, op = (
        (NFE, "1.01", "http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe", "nfeDistDFeInteresse")
        if product == "nfe"
        else (CTE, "1.00", "http://www.portalfiscal.inf.br/cte/wsdl/CTeDistribuicaoDFe", "cteDistDFeInteresse")
    )
    msg = "nfeDadosMsg" if product == "nfe" else "cteDadosMsg"
    who = f"<CPF>{cpf}</CPF>" if cpf else f"<CNPJ>{cnpj}</CNPJ>"
    if key is not None:
        mode = f"<consChNFe><chNFe>{key}</chNFe></consChNFe>"
    elif nsu is not None:
        mode = f"<consNSU><NSU>{nsu:015d}</NSU></consNSU>"
    else:
        mode = f"<distNSU><ultNSU>{(ult or 0):015d}</ultNSU></distNSU>"
    return (
        f'<soap:Envelope xmlns:soap="{SOAP12}"><soap:Body><{op} xmlns="{wsdl}"><{msg}>'
        f'<distDFeInt xmlns="{ns}" versao="{versao}"><tpAmb>{tp_amb}</tpAmb><cUFAutor>35</cUFAutor>{who}{mode}'
        f"</distDFeInt></{msg}></{op}></soap:Body></soap:Envelope>"
    ).encode()


@dataclass
class DistAnswer:
    root: etree._Element  # the whole envelope
    ret: etree._Element  # retDistDFeInt
    ns: str

    def text(self, tag: str) -> str:
        return self.ret.findtext(f"{{{self.ns}}}{tag}") or ""

    @property
    def cstat(self) -> int:
        return int(self.text("cStat"))

    @property
    def ult_nsu(self) -> int:
        return int(self.text("ultNSU"))

    @property
    def max_nsu(self) -> int:
        return int(self.text("maxNSU"))

    def docs(self) -> list[tuple[int, str, bytes]]:
        return [
            (int(z.get("NSU") or 0), z.get("schema") or "", gzip.decompress(base64.b64decode(z.text or "")))
            for z in self.ret.iter(f"{{{self.ns}}}docZip")
        ]


def read_dist(response: httpx.Response, ns: str = NFE) -> DistAnswer:
    assert response.status_code == 200, response.text
    root = etree.fromstring(response.content)
    ret = next(root.iter(f"{{{ns}}}retDistDFeInt"))
    return DistAnswer(root, ret, ns)


def manifestation_envelope(
    cert: IssuedCert,
    key: str,
    tp: str,
    *,
    author: str = RECIPIENT,
    seq: int = 1,
    at: datetime,
    just: str | None = None,
    soap11: bool = False,
    c_orgao: str = "91",
    tp_amb: int = 2,
    event_id: str | None = None,
) -> bytes:
    desc = {
        "210200": "Confirmacao da Operacao",
        "210210": "Ciencia da Operacao",
        "210220": "Desconhecimento da Operacao",
        "210240": "Operacao nao Realizada",
    }[tp]
    ident = event_id or f"ID{tp}{key}{seq:02d}"
    just_xml = f"<xJust>{just}</xJust>" if just else ""
    evento = (
        f'<evento xmlns="{NFE}" versao="1.00"><infEvento Id="{ident}"><cOrgao>{c_orgao}</cOrgao>'
        f"<tpAmb>{tp_amb}</tpAmb><CNPJ>{author}</CNPJ><chNFe>{key}</chNFe><dhEvento>{brasilia_iso(at)}</dhEvento>"
        f"<tpEvento>{tp}</tpEvento><nSeqEvento>{seq}</nSeqEvento><verEvento>1.00</verEvento>"
        f'<detEvento versao="1.00"><descEvento>{desc}</descEvento>{just_xml}</detEvento></infEvento></evento>'
    ).encode()
    signed = sign_enveloped(evento, ident, cert.key_pem, cert.cert_pem)
    env = f'<envEvento xmlns="{NFE}" versao="1.00"><idLote>1</idLote>'.encode() + signed + b"</envEvento>"
    wsdl = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4"
    soap = SOAP11 if soap11 else SOAP12
    return (
        f'<soap:Envelope xmlns:soap="{soap}"><soap:Body><nfeDadosMsg xmlns="{wsdl}">'.encode()
        + env
        + b"</nfeDadosMsg></soap:Body></soap:Envelope>"
    )


def mtls_client(sandbox: Sandbox, cert: IssuedCert | None, tmp_path: Path, *, timeout: float = 10.0) -> httpx.Client:
    """A plain httpx client presenting ``cert`` (None: no client certificate) and trusting the test CA."""
    context = ssl.create_default_context(cadata=sandbox.ca_cert_pem.decode("ascii"))
    if cert is not None:
        folder = tmp_path / f"cert-{cert.cnpj or cert.common_name.replace(':', '_')}"
        folder.mkdir(exist_ok=True)
        (folder / "cert.pem").write_bytes(cert.cert_pem)
        (folder / "key.pem").write_bytes(cert.key_pem)
        context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return httpx.Client(base_url=sandbox.base_url or "", verify=context, timeout=timeout)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sandbox(clock: FakeClock) -> Iterator[Sandbox]:
    with Sandbox(clock, seed=1) as box:
        yield box


@pytest.fixture
def recipient_cert(sandbox: Sandbox) -> IssuedCert:
    return sandbox.company(RECIPIENT, "DESTINATARIA TESTE LTDA")


@pytest.fixture
def https(sandbox: Sandbox) -> Sandbox:
    sandbox.start_https()
    return sandbox


@pytest.fixture
def client_for(https: Sandbox, tmp_path: Path) -> Iterator[Callable[..., httpx.Client]]:
    """Factory of mTLS clients against the running HTTPS sandbox; all closed at the end."""
    made: list[httpx.Client] = []

    def make(cert: IssuedCert | None, **kwargs: float) -> httpx.Client:
        c = mtls_client(https, cert, tmp_path, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def inproc(sandbox: Sandbox, recipient_cert: IssuedCert) -> Iterator[httpx.Client]:
    """The recipient's client through the in-process transport (no sockets)."""
    with httpx.Client(transport=sandbox.transport(recipient_cert), base_url="https://sandbox.local") as c:
        yield c


@pytest.fixture
def h() -> object:
    """The helpers above, for test modules (conftest is not importable under --import-mode=importlib)."""
    import types

    return types.SimpleNamespace(
        dist_envelope=dist_envelope,
        read_dist=read_dist,
        manifestation_envelope=manifestation_envelope,
        mtls_client=mtls_client,
        SOAP12=SOAP12,
        SOAP11=SOAP11,
        NFE=NFE,
        CTE=CTE,
        DIST_PATH=DIST_PATH,
        CTE_PATH=CTE_PATH,
        EVENT_PATH=EVENT_PATH,
        RECIPIENT=RECIPIENT,
        BRANCH=BRANCH,
        SUPPLIER=SUPPLIER,
        OTHER=OTHER,
    )
