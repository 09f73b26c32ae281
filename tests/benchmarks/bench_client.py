"""Client-side cost of one distNSU (issue 5, helper H4).

    .venv/bin/python tests/benchmarks/bench_client.py [--companies 200] [--rounds 10] [--repeat 3]

Times ``DistributionClient.dist_nsu`` (built as the engine builds it: ``from_factory`` over an
``HttpClientFactory`` whose ``transport_for`` is ``Sandbox.transport``) against the in-process
sandbox on a FakeClock, for a 137 answer (no documents) and a 138 answer with one resNFe.
The sandbox's own handling (``Router.dispatch``) is timed separately and subtracted:

- ``dist137_total_us`` / ``dist138_total_us``: the whole call;
- ``dist137_sandbox_us`` / ``dist138_sandbox_us``: inside ``Router.dispatch``;
- ``dist137_glue_us`` / ``dist138_glue_us``: the in-process transport around the handler
  (``InProcessTransport.handle_request`` minus ``Router.dispatch``: it stands for httpcore and
  the socket of a real connection);
- ``dist137_client_us`` / ``dist138_client_us``: the rest, our code + httpx's client work, the
  figure the goal is about.

Also the parts of the client path one by one (``build_request_us`` with its XSD validation,
``parse_137_us`` / ``parse_138_us`` for reading an answer). Times are CPU time of the running
thread (``time.thread_time``: other processes sharing the cores do not inflate them), the best
of ``--repeat`` rounds, microseconds per operation. Prints human lines, then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.certs.a1 import A1Certificate, load_a1  # noqa: E402
from app.config.endpoints import Service  # noqa: E402
from app.config.settings import Settings  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.core.nsu import Nsu  # noqa: E402
from app.core.products import Environment, Product  # noqa: E402
from app.fiscal.distribution import (  # noqa: E402
    RESULT_ELEMENT,
    DistNsu,
    DistributionClient,
    DistributionReply,
    Operation,
    build_request,
    parse_ret_dist,
)
from app.fiscal.http import HttpClientFactory  # noqa: E402
from app.fiscal.soap import parse_reply  # noqa: E402
from app.sandbox.router import PATHS, Router  # noqa: E402
from tests.benchmarks.bench_sandbox import Bench as SandboxBench  # noqa: E402

ENV = Environment.HOMOLOGACAO


class TimedRouter:
    """Wraps the sandbox's router: every ``dispatch`` adds its own duration to ``spent``."""

    def __init__(self, router: Router) -> None:
        self._router = router
        self.spent = 0.0

    def dispatch(self, req: Any) -> Any:
        started = time.thread_time()
        try:
            return self._router.dispatch(req)
        finally:
            self.spent += time.thread_time() - started


class Bench(SandboxBench):
    """bench_sandbox's sandbox and companies, with the app's client side built over it."""

    def __init__(self, companies: int) -> None:
        super().__init__(companies)
        self.a1s: list[A1Certificate] = [load_a1(c.pfx, c.password, now=self.clock.now()) for c in self.certs]
        self.company_ids = [Cnpj(c) for c in self.cnpjs]
        by_holder = {a1.holder_id: cert for a1, cert in zip(self.a1s, self.certs, strict=True)}
        self.timed = TimedRouter(self.sandbox.router)

        self.transport_spent = 0.0

        def transport_for(a1: A1Certificate) -> Any:
            transport = self.sandbox.transport(by_holder[a1.holder_id])
            transport._router = self.timed  # type: ignore[assignment]  # time the handler only
            handle = transport.handle_request

            def timed_handle(request: Any) -> Any:
                started = time.thread_time()
                try:
                    return handle(request)
                finally:
                    self.transport_spent += time.thread_time() - started

            transport.handle_request = timed_handle  # type: ignore[method-assign]
            return transport

        settings = Settings().with_endpoint(Service.NFE_DISTRIBUICAO, ENV, url=self.sandbox.urls["nfe_dist"])
        self.factory = HttpClientFactory(settings, transport_for=transport_for)

    def call(self, index: int) -> DistributionReply:
        # as the engine does it: a client per query, over the factory's cached httpx.Client
        client = DistributionClient.from_factory(self.factory, self.a1s[index], Product.NFE, ENV)
        return client.dist_nsu(self.company_ids[index], Nsu(self.ult[index]), "35")

    def publish_round(self) -> None:
        """One NF-e for every company."""
        self.publish(len(self.cnpjs))

    def next_round(self) -> None:
        self.clock.advance(timedelta(minutes=61))  # everybody may query again after its 137


def best(rounds: int, run: Callable[[], tuple[float, float, float]]) -> tuple[float, float, float]:
    results = [run() for _ in range(rounds)]
    return min(results, key=lambda times: times[0] - times[2])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--companies", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10, help="calls per company per measured round")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=20000, help="repetitions of the part micro-benchmarks")
    args = parser.parse_args(argv)
    bench = Bench(args.companies)
    companies = args.companies
    result: dict[str, Any] = {"benchmark": "client", "companies": companies, "rounds": args.rounds}

    # Drain (and warm up): afterwards every company's next distNSU answers 137.
    for index in range(companies):
        reply = bench.call(index)
        assert reply.cstat in (137, 138), (reply.cstat, reply.xmotivo)
        bench.ult[index] = reply.ult_nsu or 0
    bench.next_round()

    def dist_round(with_doc: bool) -> tuple[float, float, float]:
        total = 0.0
        spent = 0.0
        transport = 0.0
        done = 0
        expected = 138 if with_doc else 137
        for _ in range(args.rounds):
            if with_doc:
                bench.publish_round()
            bench.timed.spent = 0.0
            bench.transport_spent = 0.0
            replies = []
            started = time.thread_time()
            for index in range(companies):
                replies.append(bench.call(index))
            total += time.thread_time() - started
            spent += bench.timed.spent
            transport += bench.transport_spent
            for index, reply in enumerate(replies):
                assert reply.cstat == expected, (reply.cstat, reply.xmotivo)
                assert len(reply.documents) == (1 if with_doc else 0)
                assert all(doc.ok for doc in reply.documents)
                bench.ult[index] = reply.ult_nsu or 0
            done += companies
            bench.next_round()
        return total / done * 1e6, spent / done * 1e6, transport / done * 1e6

    for name, with_doc in (("dist137", False), ("dist138", True)):
        total, sandbox, transport = best(args.repeat, lambda with_doc=with_doc: dist_round(with_doc))  # type: ignore[misc]
        result[f"{name}_total_us"] = total
        result[f"{name}_sandbox_us"] = sandbox
        result[f"{name}_glue_us"] = transport - sandbox
        result[f"{name}_client_us"] = total - transport

    report = bench.sandbox.referee.report()
    assert report["violations"] == [], report["violations"][:3]

    # The parts, one by one.
    n = args.n
    cnpj = bench.company_ids[0]

    def parts_build() -> float:
        started = time.thread_time()
        for i in range(n):
            build_request(Product.NFE, ENV, cnpj, DistNsu(Nsu(i)), "35")
        return (time.thread_time() - started) / n * 1e6

    result["build_request_us"] = min(parts_build() for _ in range(args.repeat))

    bench.next_round()
    answer137 = _raw_answer(bench, 0, with_doc=False)
    bench.publish_round()
    bench.next_round()
    answer138 = _raw_answer(bench, 0, with_doc=True)
    for name, answer in (("parse_137_us", answer137), ("parse_138_us", answer138)):

        def parts_parse(answer: bytes = answer) -> float:
            started = time.thread_time()
            for _ in range(n):
                _, element = parse_reply(200, answer, RESULT_ELEMENT)
                parse_ret_dist(element, product=Product.NFE, operation=Operation.DIST_NSU, response_bytes=answer)
            return (time.thread_time() - started) / n * 1e6

        result[name] = min(parts_parse() for _ in range(args.repeat))

    bench.factory.close()
    for name, value in result.items():
        if name.endswith("_us"):
            result[name] = round(value, 1)
            print(f"{name:24s} {result[name]:10.1f} us")
    print(json.dumps(result))
    return result


def _raw_answer(bench: Bench, index: int, *, with_doc: bool) -> bytes:
    """The bytes of one live answer (for the parse micro-benchmark)."""
    reply = bench.call(index)
    assert reply.cstat == (138 if with_doc else 137), reply.cstat
    assert PATHS["nfe_dist"] in bench.sandbox.urls["nfe_dist"]
    bench.ult[index] = reply.ult_nsu or 0
    return reply.response_bytes


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    main()
