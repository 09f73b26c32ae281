"""Cost of the sandbox itself per publication and per request (issue 5, helper H1).

    .venv/bin/python tests/benchmarks/bench_sandbox.py [--n 2000] [--repeat 3]

Measures, on a FakeClock, with no sockets:

- ``publish_us``: ``Sandbox.publish_nfe`` to a recipient (the common case: it gets the resNFe);
- ``publish_transporter_us``: ``publish_nfe`` with a transporter (its queue gets the nfeProc now);
- ``full_document_us``: the first ``nfe_proc`` of a published NF-e (the lazy signature);
- ``dist137_us`` / ``dist138_us``: a distNSU answered 137 (no documents) / 138 (one resNFe),
  sandbox side only (``Router.dispatch`` of a ready ``SandboxRequest``);
- ``dist137_httpx_us`` / ``dist138_httpx_us``: the same through ``httpx.Client`` over
  ``Sandbox.transport(cert)`` (client request building and response reading included);
- ``event_us``: a Ciência (210210) lot of one signed event, sandbox side (``Router.dispatch``).

Times are the best of ``--repeat`` rounds, in microseconds per operation. Prints human lines,
then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.clock import FakeClock, brasilia_iso  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.fiscal.xmldsig import sign_enveloped  # noqa: E402
from app.sandbox.pki import IssuedCert  # noqa: E402
from app.sandbox.router import PATHS  # noqa: E402
from app.sandbox.sandbox import Sandbox  # noqa: E402
from app.sandbox.wire import SandboxRequest, caller_from_pem  # noqa: E402

START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
NFE = "http://www.portalfiscal.inf.br/nfe"
DIST_WSDL = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe"
EVENT_WSDL = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4"


def company_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{12_000_000 + index:08d}0001").value


def supplier_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{98_000_000 + index:08d}0001").value


def dist_body(cnpj: str, ult: int) -> bytes:
    return (
        f'<soap12:Envelope xmlns:soap12="{SOAP12}"><soap12:Body><nfeDistDFeInteresse xmlns="{DIST_WSDL}">'
        f'<nfeDadosMsg><distDFeInt xmlns="{NFE}" versao="1.01"><tpAmb>2</tpAmb><cUFAutor>35</cUFAutor>'
        f"<CNPJ>{cnpj}</CNPJ><distNSU><ultNSU>{ult:015d}</ultNSU></distNSU></distDFeInt></nfeDadosMsg>"
        "</nfeDistDFeInteresse></soap12:Body></soap12:Envelope>"
    ).encode()


def event_body(cert: IssuedCert, cnpj: str, key: str, at: datetime) -> bytes:
    ident = f"ID210210{key}01"
    evento = (
        f'<evento xmlns="{NFE}" versao="1.00"><infEvento Id="{ident}"><cOrgao>91</cOrgao><tpAmb>2</tpAmb>'
        f"<CNPJ>{cnpj}</CNPJ><chNFe>{key}</chNFe><dhEvento>{brasilia_iso(at)}</dhEvento><tpEvento>210210"
        '</tpEvento><nSeqEvento>1</nSeqEvento><verEvento>1.00</verEvento><detEvento versao="1.00">'
        "<descEvento>Ciencia da Operacao</descEvento></detEvento></infEvento></evento>"
    ).encode()
    signed = sign_enveloped(evento, ident, cert.key_pem, cert.cert_pem)
    return (
        f'<soap12:Envelope xmlns:soap12="{SOAP12}"><soap12:Body><nfeDadosMsg xmlns="{EVENT_WSDL}">'
        f'<envEvento xmlns="{NFE}" versao="1.00"><idLote>1</idLote>'.encode()
        + signed
        + b"</envEvento></nfeDadosMsg></soap12:Body></soap12:Envelope>"
    )


class Bench:
    """One sandbox with ``companies`` client companies and a few suppliers."""

    def __init__(self, companies: int) -> None:
        self.clock = FakeClock(START)
        self.sandbox = Sandbox(self.clock, seed=7)
        self.sandbox.serve_in_process()
        self.suppliers = [supplier_cnpj(i) for i in range(10)]
        for cnpj in self.suppliers:
            self.sandbox.party(cnpj)
        self.certs = [self.sandbox.company(company_cnpj(i), f"EMPRESA {i:03d} LTDA") for i in range(companies)]
        self.cnpjs = [company_cnpj(i) for i in range(companies)]
        self.callers = [caller_from_pem(c.cert_pem) for c in self.certs]
        self.ult = [0] * companies

    def publish(self, n: int, transporter: bool = False) -> list[Any]:
        out = []
        for i in range(n):
            company = self.cnpjs[i % len(self.cnpjs)]
            supplier = self.suppliers[i % len(self.suppliers)]
            if transporter:
                buyer = self.suppliers[(i + 1) % len(self.suppliers)]
                out.append(self.sandbox.publish_nfe(supplier, buyer, transporter=company))
            else:
                out.append(self.sandbox.publish_nfe(supplier, company))
        return out

    def dist_request(self, index: int) -> SandboxRequest:
        return SandboxRequest(
            "POST",
            PATHS["nfe_dist"],
            {},
            {"content-type": "application/soap+xml"},
            dist_body(self.cnpjs[index], self.ult[index]),
            self.callers[index],
        )

    def next_round(self) -> None:
        # everybody may query again (one hour after its 137)
        self.clock.advance(timedelta(minutes=61))


def best(rounds: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(rounds))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="operations per round")
    parser.add_argument("--companies", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n, companies = args.n, args.companies
    bench = Bench(companies)
    result: dict[str, Any] = {"benchmark": "sandbox", "n": n, "companies": companies}

    # warm up: schemas compiled, signers' certificates issued, code paths hot
    bench.publish(len(bench.suppliers) * 2)
    bench.publish(len(bench.suppliers), transporter=True)

    def publish_round(transporter: bool) -> float:
        started = time.perf_counter()
        bench.publish(n, transporter)
        return (time.perf_counter() - started) / n * 1e6

    result["publish_us"] = best(args.repeat, lambda: publish_round(False))
    result["publish_transporter_us"] = best(args.repeat, lambda: publish_round(True))

    def full_round() -> float:
        docs = bench.publish(max(50, n // 10))
        started = time.perf_counter()
        for doc in docs:
            doc.nfe_proc  # noqa: B018 - the lazy signature is what is measured
        return (time.perf_counter() - started) / len(docs) * 1e6

    result["full_document_us"] = best(args.repeat, full_round)

    # Drain every queue so the next distNSU of each company answers 137.
    bench.next_round()
    router = bench.sandbox.router
    for index in range(companies):
        while True:
            answer = router.dispatch(bench.dist_request(index))
            bench.ult[index] = _ult(answer.body)
            if b"<cStat>137</cStat>" in answer.body or bench.ult[index] >= bench.sandbox.max_nsu(
                "nfe", bench.cnpjs[index]
            ):
                break
    bench.next_round()

    def dist_round(with_doc: bool, via_httpx: bool) -> float:
        total = 0.0
        done = 0
        while done < n:
            if with_doc:
                bench.publish(companies)
            requests = [bench.dist_request(i) for i in range(companies)]
            clients = (
                [
                    httpx.Client(transport=bench.sandbox.transport(bench.certs[i]), base_url="https://sandbox.invalid")
                    for i in range(companies)
                ]
                if via_httpx
                else []
            )
            started = time.perf_counter()
            bodies: list[bytes] = []
            if via_httpx:
                for i, client in enumerate(clients):
                    response = client.post(
                        PATHS["nfe_dist"],
                        content=requests[i].body,
                        headers={"Content-Type": "application/soap+xml; charset=utf-8"},
                    )
                    bodies.append(response.content)
            else:
                for req in requests:
                    bodies.append(router.dispatch(req).body)
            total += time.perf_counter() - started
            for client in clients:
                client.close()
            expected = b"<cStat>138</cStat>" if with_doc else b"<cStat>137</cStat>"
            for i, body in enumerate(bodies):
                assert expected in body, body[:1000]
                bench.ult[i] = _ult(body)
            done += companies
            bench.next_round()
        return total / done * 1e6

    result["dist137_us"] = best(args.repeat, lambda: dist_round(False, False))
    result["dist138_us"] = best(args.repeat, lambda: dist_round(True, False))
    result["dist137_httpx_us"] = best(args.repeat, lambda: dist_round(False, True))
    result["dist138_httpx_us"] = best(args.repeat, lambda: dist_round(True, True))
    _check_answers(bench)

    def event_round() -> float:
        docs = bench.publish(min(n, 500))
        at = bench.clock.now()
        bench.clock.advance(timedelta(minutes=5))
        by_cnpj = {c: i for i, c in enumerate(bench.cnpjs)}
        requests = []
        for doc in docs:
            i = by_cnpj[doc.recipient.doc]
            body = event_body(bench.certs[i], bench.cnpjs[i], doc.key, at)
            requests.append(SandboxRequest("POST", PATHS["nfe_evento"], {}, {}, body, bench.callers[i]))
        started = time.perf_counter()
        for req in requests:
            response = router.dispatch(req)
            assert b"<cStat>135</cStat>" in response.body, response.body[:2000]
        return (time.perf_counter() - started) / len(requests) * 1e6

    result["event_us"] = best(args.repeat, event_round)
    for name, value in result.items():
        if name.endswith("_us"):
            result[name] = round(value, 1)
            print(f"{name:24s} {result[name]:10.1f} us")
    print(json.dumps(result))
    return result


def _ult(body: bytes) -> int:
    start = body.index(b"<ultNSU>") + len(b"<ultNSU>")
    return int(body[start : start + 15])


def _check_answers(bench: Bench) -> None:
    """The rounds above were answered as intended: no rule broken, every document delivered."""
    report = bench.sandbox.referee.report()
    assert report["violations"] == [], report["violations"][:3]
    codes = {r.cstat for r in bench.sandbox.referee.requests}
    assert codes <= {137, 138}, codes


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    main()
