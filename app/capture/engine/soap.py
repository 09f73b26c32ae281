"""One SOAP distribution lot (``distNSU``), shared by the NF-e and CT-e adapters.

The product's answer policy is ``app.core.cadence_an.policy_for(product)``; the product gives its
per-document processing; this module calls ``DistributionClient.dist_nsu`` and turns the reply, or the failure, into the
engine's :class:`LotAnswer`. The point queries (``consNSU``, ``consChNFe``) use the same two
product functions (``app.capture.engine.points``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import httpx

from app.capture.context import CaptureContext, outcome_of
from app.capture.engine.adapter import DistributionAdapter, LotAnswer, RunSoFar, StoredLot, StoreInput
from app.config.endpoints import Service
from app.core.archive import archive_exchange
from app.core.cadence import CadenceRules, CaptureState, CommunicationFailure, Transition, rules_for
from app.core.cadence_an import DistributionResult, policy_for
from app.core.cstat import ANSWERED
from app.core.ids import Cnpj
from app.core.nsu import Nsu
from app.core.products import Product
from app.fiscal.distribution import DistributedDocument, DistributionClient
from app.fiscal.errors import CommunicationError, ConnectionFailed, RequestInvalid, TlsRefused
from app.store.records import CallOutcome, CaptureSettings, Company

OPERATION = "distNSU"
Reader = Callable[[Cnpj, DistributedDocument], StoreInput]
"""A SOAP product's docZip reader: one document in, one store input out, never raising."""


class SoapAdapter(DistributionAdapter, Protocol):
    """A SOAP distribution product (NF-e, CT-e): its per-docZip processing."""

    def process(self, company: Cnpj, doc: DistributedDocument, settings: CaptureSettings | None) -> StoreInput:
        """One docZip in, one store input out; never raises for bad content."""
        ...


@dataclass(frozen=True, slots=True)
class SoapProduct:
    """What the NF-e and CT-e adapters share: the distNSU lot, the names (from the ``service``),
    the reading of each docZip (``read``), "notable unless quarantined", and by default no reads
    before a lot and no writes of its own. A product subclasses it with its service and reader as
    defaults and overrides what it does with a lot."""

    ctx: CaptureContext
    service: Service
    read: Reader

    def query(self, company: Company, settings: CaptureSettings, state: CaptureState, run: RunSoFar) -> LotAnswer:
        return soap_lot(self.ctx, self, rules_for(self.product), company, settings, state)

    def process(self, company: Cnpj, doc: DistributedDocument, settings: CaptureSettings | None) -> StoreInput:
        return self.read(company, doc)

    def notable(self, company: Company, settings: CaptureSettings, item: StoreInput) -> bool:
        return not getattr(item, "parse_error", None)

    def prepare_lot(self, company: Company, items: Sequence[StoreInput]) -> object:
        return None

    def within_lot(self, lot: StoredLot) -> None:
        return None

    def within_recovery(self, lot: StoredLot) -> None:
        return None

    @property
    def product(self) -> Product:
        return self.service.product

    @property
    def job_type(self) -> str:
        return f"{self.product.value}_distribution"

    @property
    def operation(self) -> str:
        return OPERATION


def soap_lot(
    ctx: CaptureContext,
    adapter: SoapAdapter,
    rules: CadenceRules,
    company: Company,
    settings: CaptureSettings,
    state: CaptureState,
) -> LotAnswer:
    """One distNSU from the state's cursor and the state its answer (or failure) leaves."""
    policy = policy_for(adapter.product)
    a1 = ctx.certificates.get(company, ctx.clock.now())
    client = DistributionClient.from_factory(ctx.http, a1, adapter.product, settings.environment)
    try:
        reply = client.dist_nsu(company.cnpj, Nsu(state.ult_nsu), settings.c_uf_autor)
    except RequestInvalid as error:
        # Our own request broke the schema: a program or settings fault, never sent. Stop this
        # company with the reason rather than retrying the same invalid request forever.
        stopped = Transition(replace(state, disabled_reason=error.message))
        return LotAnswer(stopped, CallOutcome.REJECTED, error=error.message)
    except CommunicationError as error:
        reached = may_have_reached_service(error)
        transition = policy(state, rules, ctx.clock.now(), CommunicationFailure(error.message, reached))
        return LotAnswer(transition, outcome_of(error), error=error.message)
    now = ctx.clock.now()
    items = [adapter.process(company.cnpj, doc, settings) for doc in reply.documents]
    result = DistributionResult(
        cstat=reply.cstat,
        xmotivo=reply.xmotivo,
        dh_resp=reply.dh_resp,
        ult_nsu=reply.ult_nsu,
        max_nsu=reply.max_nsu,
        received_nsus=tuple(doc.nsu for doc in reply.documents),
    )
    transition = policy(state, rules, now, result)
    outcome = CallOutcome.OK if reply.cstat in ANSWERED else CallOutcome.REJECTED
    # What the rule book archives for this product (app.core.archive); every call is logged.
    keep = archive_exchange(adapter.product, reply.cstat, has_documents=bool(reply.documents))
    return LotAnswer(
        transition,
        outcome,
        items,
        code=str(reply.cstat),
        http_status=reply.http_status,
        exchange=(reply.request_bytes, reply.response_bytes) if keep else None,
        corrupt=tuple(doc.nsu for doc in reply.documents if doc.xml is None),
    )


def may_have_reached_service(error: CommunicationError) -> bool:
    """Whether the service may have processed the request whose answer we lost.

    A refused or unreachable connection and a failed handshake never sent it; a connection that
    dropped after the request went out (server disconnected, reset while reading) may have carried
    a 137 we never saw, so the retry must respect the one-hour wait like a timeout does.
    """
    if isinstance(error, TlsRefused):
        return False
    if isinstance(error, ConnectionFailed):
        cause = error.__cause__
        return isinstance(cause, httpx.TransportError) and not isinstance(cause, httpx.ConnectError)
    return True
