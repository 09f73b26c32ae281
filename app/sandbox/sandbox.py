"""The sandbox facade: services, publishing, faults, referee, HTTPS server and in-process transport.

Typical test use::

    clock = FakeClock()
    with Sandbox(clock) as sandbox:
        cert = sandbox.company("11222333000181", "DESTINATARIA LTDA")
        base_url = sandbox.start_https()
        sandbox.publish_nfe(emitter="...", recipient="11222333000181")
        ...  # httpx with cert=(cert files) and verify=CA, or transport=sandbox.transport(cert)
        report = sandbox.referee.report()
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Unpack

from lxml import etree

from app.core.clock import Clock
from app.sandbox.adn_service import NfseServices
from app.sandbox.context import Context
from app.sandbox.dist_service import CTE, NFE, DistributionService
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.events_service import EventService
from app.sandbox.faults import Fault
from app.sandbox.pki import IssuedCert, TestPki
from app.sandbox.publisher import NfeOptions, PartyLike, Publisher
from app.sandbox.referee import Referee
from app.sandbox.router import PATHS, Router
from app.sandbox.server import SandboxHttpsServer, server_context
from app.sandbox.soap import CTE_NS, NFE_NS, SOAP12
from app.sandbox.state import Entry
from app.sandbox.transport import InProcessTransport
from app.sandbox.wire import Caller, SandboxRequest


class Sandbox:
    """A faithful, rule-enforcing stand-in for the AN (NF-e/CT-e), the ADN and the Sefin Nacional."""

    def __init__(
        self,
        clock: Clock,
        pki: TestPki | None = None,
        tp_amb: int = 2,
        seed: int = 0,
        *,
        adn_rate_per_minute: int = 60,
    ) -> None:
        self.clock = clock
        # Certificates must be valid both on the sandbox clock (signatures) and in real time (TLS).
        self.pki = pki or TestPki.create(now=min(clock.now(), datetime.now(UTC)) - timedelta(days=30))
        self.factory = DocumentFactory(self.pki, seed=seed, tp_amb=tp_amb)
        self.ctx = Context(clock=clock, tp_amb=tp_amb, pki=self.pki, factory=self.factory)
        self.publisher = Publisher(self.ctx)
        self.ctx.publisher = self.publisher
        self.nfe_distribution = DistributionService(self.ctx, NFE)
        self.cte_distribution = DistributionService(self.ctx, CTE)
        self.events = EventService(self.ctx)
        self.nfse_services = NfseServices(self.ctx, rate_per_minute=adn_rate_per_minute)
        self.router = Router(
            self.ctx,
            {
                "nfe_dist": self.nfe_distribution.handle,
                "cte_dist": self.cte_distribution.handle,
                "nfe_evento": self.events.handle,
                "adn": self.nfse_services.handle_adn,
                "sefin": self.nfse_services.handle_sefin,
            },
        )
        self.companies: dict[str, IssuedCert] = {}
        self._server: SandboxHttpsServer | None = None
        self.base_url: str | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start_https(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve every service over HTTPS with mutual TLS; returns the base URL."""
        if self._server is not None:
            return self.base_url or ""
        server_cert = self.pki.server_cert(
            ("localhost", "127.0.0.1", "::1")
            if host in ("127.0.0.1", "localhost")
            else (host, "localhost", "127.0.0.1")
        )
        context = server_context(server_cert.cert_pem, server_cert.key_pem, self.pki.ca_cert_pem)
        self._server = SandboxHttpsServer((host, port), self.router, context)
        self._server.start()
        self.base_url = f"https://{host}:{self._server.server_address[1]}"
        return self.base_url

    def serve_in_process(self, base_url: str = "https://sandbox.invalid") -> str:
        """No sockets: URLs under ``base_url`` for clients that use :meth:`transport` (simulations)."""
        if self.base_url is None:
            self.base_url = base_url
        return self.base_url

    def stop(self, timeout: float = 5.0) -> None:
        if self._server is not None:
            self._server.stop(timeout)
            self._server = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def urls(self) -> dict[str, str]:
        """Per service: its URL (ADN and Sefin: the base the API paths hang from)."""
        if self.base_url is None:
            raise RuntimeError("start_https() first")
        return {service: self.base_url + path for service, path in PATHS.items()}

    @property
    def ca_cert_pem(self) -> bytes:
        return bytes(self.pki.ca_cert_pem)

    @property
    def referee(self) -> Referee:
        return self.ctx.referee

    # --- parties and certificates ------------------------------------------------------------
    def company(self, cnpj: str, name: str, **cert_options: Any) -> IssuedCert:
        """An e-CNPJ A1 for a company (registered as a party for publishing)."""
        cert = self.pki.company_cert(cnpj, name, **cert_options)
        doc = cert.cnpj or cnpj
        self.publisher.register(Party(doc=doc, name=name))
        self.companies[doc] = cert
        return cert

    def person(self, cpf: str, name: str, **cert_options: Any) -> IssuedCert:
        cert = self.pki.person_cert(cpf, name, **cert_options)
        self.publisher.register(Party(doc=cpf, name=name))
        return cert

    def party(self, who: PartyLike) -> Party:
        return self.publisher.party(who)

    def issuer(self, who: PartyLike) -> Party:
        """:meth:`party`, with its signing certificate and key made now (see
        :meth:`DocumentFactory.prepare_signer`)."""
        party = self.publisher.party(who)
        self.factory.prepare_signer(party)
        return party

    def transport(self, client_cert: IssuedCert | bytes, *, competitor: bool = False) -> InProcessTransport:
        """An httpx transport calling the handlers in-process as the holder of ``client_cert``."""
        pem = client_cert if isinstance(client_cert, bytes) else client_cert.cert_pem
        return InProcessTransport(self.router, pem, self.clock, competitor=competitor)

    # --- publishing --------------------------------------------------------------------------
    def publish_nfe(self, emitter: PartyLike, recipient: PartyLike, **options: Unpack[NfeOptions]) -> Any:
        return self.publisher.nfe(emitter, recipient, **options)

    def publish_nfe_event(self, nfe: Any, tp_evento: str, author: PartyLike | None = None, **options: Any) -> Any:
        return self.publisher.nfe_event(nfe, tp_evento, author, **options)

    def publish_cte(self, emitter: PartyLike, sender: PartyLike, recipient: PartyLike, **options: Any) -> Any:
        return self.publisher.cte(emitter, sender, recipient, **options)

    def publish_cte_event(self, cte: Any, tp_evento: str, author: PartyLike | None = None, **options: Any) -> Any:
        return self.publisher.cte_event(cte, tp_evento, author, **options)

    def publish_nfse(
        self, provider: PartyLike, taker: PartyLike | None, intermediary: PartyLike | None = None, **options: Any
    ) -> Any:
        return self.publisher.nfse(provider, taker, intermediary, **options)

    def publish_nfse_event(self, nfse: Any, code: str, author: PartyLike | None = None, **options: Any) -> Any:
        return self.publisher.nfse_event(nfse, code, author, **options)

    def entries(self, product: str, doc: str) -> list[Entry]:
        with self.ctx.state.lock:
            return list(self.ctx.state.ledger(product, doc).entries)

    def max_nsu(self, product: str, doc: str) -> int:
        with self.ctx.state.lock:
            return self.ctx.state.ledger(product, doc).max_nsu

    # --- misbehaviour on demand ----------------------------------------------------------------
    def outage(self, service: str, cstat: int, until: datetime) -> None:
        """``service`` answers ``cstat`` (108/109; HTTP 503 for adn/sefin) until ``until``."""
        self.ctx.outages.set(service, cstat, until)

    def inject_fault(
        self, service: str, kind: str, *, count: int = 1, cnpj: str | None = None, stall_seconds: float = 1.0
    ) -> Fault:
        """The next ``count`` matching requests misbehave (see app.sandbox.faults for the kinds)."""
        return self.ctx.faults.inject(service, kind, count=count, doc=cnpj, stall_seconds=stall_seconds)

    @property
    def fired_faults(self) -> list[Any]:
        return list(self.ctx.faults.fired)

    def other_consumer(self, cnpj: str, product: str = "nfe", at: datetime | None = None) -> None:
        """Another system using the same certificate reads ``cnpj``'s ``product`` queue (NF-e,
        CT-e) the first moment the AN allows it from ``at`` (default now), as the AN sees it: its
        distNSU advances the CNPJ's one NSU sequence, so the app's next distNSU from its older
        ultNSU gets 656 carrying the new ultNSU and maxNSU, and only consNSU still serves the
        NSUs it took. NFS-e has no such thing: the ADN serves any NSU to whoever asks."""
        service = self.nfe_distribution if product == "nfe" else self.cte_distribution
        service.other_consumer(cnpj, at if at is not None else self.clock.now())

    def competitor_query(self, cnpj: str, product: str = "nfe", ult_nsu: int | None = None) -> int:
        """Another system using the same CNPJ runs a distNSU; returns its cStat.

        It continues the shared sequence (or starts at ``ult_nsu``), taking documents the app will
        not get by distNSU and possibly starting the one-hour wait: the app's next query may get 656,
        which the referee attributes to the competitor.
        """
        service = self.nfe_distribution if product == "nfe" else self.cte_distribution
        ns, versao = (NFE_NS, "1.01") if product == "nfe" else (CTE_NS, "1.00")
        with self.ctx.state.lock:
            guard = self.ctx.guard(product, cnpj)
            start = ult_nsu if ult_nsu is not None else (guard.last_ult_nsu or 0)
        uf = "<cUFAutor>35</cUFAutor>"
        body = (
            f'<soap:Envelope xmlns:soap="{SOAP12}"><soap:Body><distDFeInt xmlns="{ns}" versao="{versao}">'
            f"<tpAmb>{self.ctx.tp_amb}</tpAmb>{uf}<CNPJ>{cnpj}</CNPJ><distNSU><ultNSU>{start:015d}</ultNSU>"
            "</distNSU></distDFeInt></soap:Body></soap:Envelope>"
        ).encode()
        caller = Caller(cnpj=cnpj, cpf=None, common_name="OUTRO SISTEMA", competitor=True)
        response = service.handle(SandboxRequest("POST", "/", {}, {}, body, caller))
        root = etree.fromstring(response.body)
        return int(root.findtext(f".//{{{ns}}}cStat") or "0")
