"""NFeDistribuicaoDFe (distDFeInt 1.01) and CTeDistribuicaoDFe (distDFeInt 1.00): bytes in, dataclasses out.

Requests (protocol.md §1.3, §2): ``tpAmb``, ``cUFAutor`` (optional for NF-e, required for CT-e),
``CNPJ`` or ``CPF``, then ``distNSU/ultNSU`` | ``consNSU/NSU`` | ``consChNFe/chNFe`` (NF-e only: the
CT-e layout has no by-key query). NSUs are always 15 digits. Every request is validated against
the official XSD before it is sent: an invalid one raises :class:`RequestInvalid` and never
reaches the network (field-lessons #15).

Replies (``retDistDFeInt``) are read tolerantly: found anywhere under the SOAP Body (any wrapper,
any prefix), ``ultNSU``/``maxNSU`` optional (the XSD requires them, the MOC does not), ``dhResp``
with or without a UTC offset (the CT-e XSD has none: Brasília time is assumed). Each ``docZip``
is decoded (base64 → bounded gunzip) into the document's original bytes; a corrupt one does not
fail the reply: its :class:`DistributedDocument` carries the error and the raw base64, so the
engine can quarantine it. Dispatching on the root element is the caller's job.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

import httpx
from lxml import etree

from app.certs.a1 import A1Certificate
from app.config.endpoints import CTE_NS, NFE_NS, SOAP_BINDINGS, Service
from app.core.clock import BRASILIA
from app.core.cstat import NO_DOCUMENTS
from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf
from app.core.keys import CODE_BY_UF, UF_BY_CODE, AccessKey, DocumentModel
from app.core.nsu import Nsu
from app.core.products import Environment, Product
from app.fiscal.errors import MalformedResponse, RequestInvalid
from app.fiscal.http import HttpClientFactory
from app.fiscal.schemas import Schema, SchemaInvalid, validate
from app.fiscal.soap import parse_reply, post_soap
from app.safexml import DEFAULT_MAX, MiB, XmlRejected, doczip_gzip, inflate

MAX_DOCZIP_COMPRESSED = 10 * MiB
MAX_DOCUMENT_BYTES = DEFAULT_MAX
RESULT_ELEMENT = "retDistDFeInt"


@dataclass(frozen=True)
class _Layout:
    service: Service
    namespace: str
    versao: str
    schema: Schema
    requires_uf: bool
    by_key: bool
    alphanumeric_cnpj: bool


_LAYOUTS = {
    Product.NFE: _Layout(Service.NFE_DISTRIBUICAO, NFE_NS, "1.01", Schema.NFE_DIST_REQUEST, False, True, True),
    Product.CTE: _Layout(Service.CTE_DISTRIBUICAO, CTE_NS, "1.00", Schema.CTE_DIST_REQUEST, True, False, False),
}


def _layout(product: Product) -> _Layout:
    try:
        return _LAYOUTS[product]
    except KeyError:
        raise RequestInvalid(
            f"{product.label} não usa os serviços SOAP de distribuição (use o cliente do ADN)."
        ) from None


# --- queries -------------------------------------------------------------------------------------


class Operation(Enum):
    DIST_NSU = "distNSU"
    CONS_NSU = "consNSU"
    CONS_CHAVE = "consChNFe"


@dataclass(frozen=True)
class DistNsu:
    """The lot after ``ult_nsu`` (the cursor)."""

    ult_nsu: Nsu
    operation = Operation.DIST_NSU


@dataclass(frozen=True)
class ConsNsu:
    """The one document of ``nsu`` (gap recovery)."""

    nsu: Nsu
    operation = Operation.CONS_NSU


@dataclass(frozen=True)
class ConsChNFe:
    """The NF-e of ``key`` (resNFe, or nfeProc once manifested); NF-e only."""

    key: AccessKey
    operation = Operation.CONS_CHAVE


Query = DistNsu | ConsNsu | ConsChNFe


def c_uf_code(value: str | int | None) -> str | None:
    """The 2-digit IBGE code for ``cUFAutor`` from "35", 35 or "SP" (``None`` stays ``None``)."""
    if value is None:
        return None
    text = f"{value:02d}" if isinstance(value, int) else value.strip().upper()
    if text in UF_BY_CODE:
        return text
    if text in CODE_BY_UF:
        return CODE_BY_UF[text]
    raise RequestInvalid(f"UF do autor (cUFAutor) inválida: {value!r}. Informe a sigla (SP) ou o código IBGE (35).")


def build_request(
    product: Product,
    environment: Environment,
    interested: Cnpj | Cpf,
    query: Query,
    c_uf_autor: str | int | None = None,
) -> bytes:
    """The ``distDFeInt`` of ``product`` (no XML declaration), validated against the official XSD."""
    layout = _layout(product)
    uf = c_uf_code(c_uf_autor)
    if layout.requires_uf and uf is None:
        raise RequestInvalid(f"A distribuição de {product.label} exige a UF do autor (cUFAutor).")
    ns = layout.namespace
    if isinstance(query, DistNsu):
        mode = f"<distNSU><ultNSU>{query.ult_nsu}</ultNSU></distNSU>"
    elif isinstance(query, ConsNsu):
        mode = f"<consNSU><NSU>{query.nsu}</NSU></consNSU>"
    else:
        if not layout.by_key:
            raise RequestInvalid(
                f"A distribuição de {product.label} não oferece consulta por chave de acesso "
                "(o leiaute oficial só tem distNSU e consNSU)."
            )
        if query.key.model != DocumentModel.NFE.value:
            raise RequestInvalid(
                f"A consulta por chave (consChNFe) só atende NF-e modelo 55; a chave {query.key} é do modelo "
                f"{query.key.model}."
            )
        mode = f"<consChNFe><chNFe>{query.key}</chNFe></consChNFe>"
    who = f"<CNPJ>{interested.value}</CNPJ>" if isinstance(interested, Cnpj) else f"<CPF>{interested.value}</CPF>"
    uf_xml = f"<cUFAutor>{uf}</cUFAutor>" if uf is not None else ""
    request = (
        f'<distDFeInt xmlns="{ns}" versao="{layout.versao}"><tpAmb>{int(environment)}</tpAmb>{uf_xml}{who}{mode}'
        "</distDFeInt>"
    ).encode()
    # By NSU, only the number changes between a company's requests, and ``Nsu`` is 15 digits by
    # construction (the schema's TNSU): the rest of the request is validated once per process.
    number = query.ult_nsu if isinstance(query, DistNsu) else query.nsu if isinstance(query, ConsNsu) else None
    shape = (product, int(environment), uf_xml, who, type(query)) if isinstance(number, Nsu) else None
    if shape is not None and shape in _VALID_SHAPES:
        return request
    try:
        validate(_own_tree(request), layout.schema)
    except SchemaInvalid as exc:
        hint = ""
        if isinstance(interested, Cnpj) and interested.is_alphanumeric and not layout.alphanumeric_cnpj:
            hint = (
                f" O leiaute da distribuição de {product.label} (versão {layout.versao}) ainda não aceita CNPJ "
                f"alfanumérico: {interested.formatted()} não pode ser consultado por este serviço."
            )
        raise RequestInvalid(
            f"Requisição de distribuição de {product.label} recusada antes do envio: {exc.message}.{hint}",
            errors=exc.errors,
        ) from exc
    if shape is not None:
        if len(_VALID_SHAPES) >= _MAX_SHAPES:
            _VALID_SHAPES.clear()
        _VALID_SHAPES.add(shape)
    return request


_MAX_SHAPES = 10_000  # companies x products x environments: far more than an office has
_VALID_SHAPES: set[tuple[object, ...]] = set()


_local = threading.local()


def _own_tree(request: bytes) -> etree._Element:
    """Our own request as a tree for the XSD check.

    Built here from validated identifiers and digits, it is not outside XML: a strict plain parser
    (no DTD, no network, never recovering) is enough, without :func:`app.safexml.parse_xml`'s
    checks for hostile input. lxml parsers are not shared across threads.
    """
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=False)
        _local.parser = parser
    return etree.fromstring(request, parser)


# --- replies -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistributedDocument:
    """One ``docZip``: ``xml`` is the decoded original bytes, or ``None`` with ``error`` when corrupt.

    ``raw_b64`` is the docZip text as received (kept for quarantine and re-decoding). ``xml_gzip``
    is the gzip ``xml`` was inflated from, when ``xml`` is set (the store keeps it as the
    compressed form instead of compressing ``xml`` again).
    """

    nsu: int
    schema: str
    xml: bytes | None
    error: XmlRejected | None
    raw_b64: str = field(repr=False)
    xml_gzip: bytes | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class DistributionReply:
    """A ``retDistDFeInt`` and the exchange that produced it.

    ``ult_nsu``/``max_nsu`` are ``None`` when absent; ``dh_resp`` is aware (Brasília assumed when the
    service omits the offset) or ``None`` when absent or unreadable.
    """

    product: Product
    operation: Operation
    cstat: int
    xmotivo: str
    dh_resp: datetime | None
    ult_nsu: int | None
    max_nsu: int | None
    ver_aplic: str
    tp_amb: int | None
    documents: tuple[DistributedDocument, ...]
    request_bytes: bytes = field(repr=False)
    response_bytes: bytes = field(repr=False)
    elapsed_ms: float
    http_status: int = 200

    @property
    def caught_up(self) -> bool:
        """The cursor reached the last NSU the service has (137, or ultNSU == maxNSU)."""
        if self.cstat == NO_DOCUMENTS:
            return True
        return self.ult_nsu is not None and self.max_nsu is not None and self.ult_nsu >= self.max_nsu


_DIGITS = re.compile(r"\s*([0-9]{1,15})\s*")


def _children(element: etree._Element) -> dict[str, etree._Element]:
    """First child per local name (any namespace, any prefix)."""
    out: dict[str, etree._Element] = {}
    for child in element.iterchildren("{*}*"):  # elements only (no comments or PIs)
        out.setdefault(child.tag.rpartition("}")[2], child)
    return out


def _text(children: dict[str, etree._Element], name: str) -> str | None:
    node = children.get(name)
    if node is None or node.text is None:
        return None
    return str(node.text).strip()


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    match = _DIGITS.fullmatch(text)
    return int(match.group(1)) if match else None


def parse_datetime(text: str | None) -> datetime | None:
    """An ISO date-time from the services; without an offset it is Brasília time (CT-e ``dhResp``)."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=BRASILIA)


def decode_documents(ret: etree._Element) -> tuple[DistributedDocument, ...]:
    """Every ``docZip`` of a ``retDistDFeInt``, decoded one by one (errors stay per document)."""
    documents: list[DistributedDocument] = []
    for node in ret.iter("{*}docZip"):
        nsu = _int(node.get("NSU"))
        if nsu is None:
            # without its NSU a document cannot be placed in the sequence: the reply is unusable
            raise MalformedResponse(f"docZip com NSU ausente ou inválido ({node.get('NSU')!r}) na resposta.")
        documents.append(decode_document(nsu, (node.get("schema") or "").strip(), node.text or ""))
    return tuple(documents)


def decode_document(nsu: int, schema: str, raw_b64: str) -> DistributedDocument:
    """One ``docZip``'s text decoded (base64, then bounded gunzip); a corrupt one carries its error."""
    try:
        compressed = doczip_gzip(raw_b64, max_compressed=MAX_DOCZIP_COMPRESSED)
        xml = inflate(compressed, max_output=MAX_DOCUMENT_BYTES)
    except XmlRejected as exc:
        return DistributedDocument(nsu, schema, None, exc, raw_b64)
    return DistributedDocument(nsu, schema, xml, None, raw_b64, compressed)


def parse_ret_dist(
    ret: etree._Element,
    *,
    product: Product,
    operation: Operation,
    request_bytes: bytes = b"",
    response_bytes: bytes = b"",
    elapsed_ms: float = 0.0,
    http_status: int = 200,
) -> DistributionReply:
    """A :class:`DistributionReply` from a ``retDistDFeInt`` element (live or recorded)."""
    children = _children(ret)
    cstat = _int(_text(children, "cStat"))
    if cstat is None:
        raise MalformedResponse("Resposta da distribuição sem cStat legível.")
    ult_text, max_text = _text(children, "ultNSU"), _text(children, "maxNSU")
    ult_nsu, max_nsu = _int(ult_text), _int(max_text)
    if (ult_text and ult_nsu is None) or (max_text and max_nsu is None):
        raise MalformedResponse(
            f"Resposta da distribuição com NSU ilegível (ultNSU={ult_text!r}, maxNSU={max_text!r})."
        )
    return DistributionReply(
        product=product,
        operation=operation,
        cstat=cstat,
        xmotivo=_text(children, "xMotivo") or "",
        dh_resp=parse_datetime(_text(children, "dhResp")),
        ult_nsu=ult_nsu,
        max_nsu=max_nsu,
        ver_aplic=_text(children, "verAplic") or "",
        tp_amb=_int(_text(children, "tpAmb")),
        documents=decode_documents(ret),
        request_bytes=request_bytes,
        response_bytes=response_bytes,
        elapsed_ms=elapsed_ms,
        http_status=http_status,
    )


# --- client --------------------------------------------------------------------------------------


class DistributionClient:
    """Queries one distribution service (NF-e or CT-e) for any interested party over ``http_client``.

    The client holds no state between calls: cadence, locks and cursors belong to the engine.
    """

    def __init__(
        self, http_client: httpx.Client, endpoint_url: str, product: Product, environment: Environment
    ) -> None:
        self._layout = _layout(product)
        self.http_client = http_client
        self.endpoint_url = endpoint_url
        self.product = product
        self.environment = environment
        self.binding = SOAP_BINDINGS[self._layout.service]

    @classmethod
    def from_factory(
        cls, factory: HttpClientFactory, a1: A1Certificate, product: Product, environment: Environment
    ) -> DistributionClient:
        service = _layout(product).service
        return cls(factory.client(a1, service, environment), factory.url(service, environment), product, environment)

    def dist_nsu(
        self, interested: Cnpj | Cpf, ult_nsu: int | Nsu, c_uf_autor: str | int | None = None
    ) -> DistributionReply:
        return self.query(interested, DistNsu(_nsu(ult_nsu)), c_uf_autor)

    def cons_nsu(
        self, interested: Cnpj | Cpf, nsu: int | Nsu, c_uf_autor: str | int | None = None
    ) -> DistributionReply:
        return self.query(interested, ConsNsu(_nsu(nsu)), c_uf_autor)

    def cons_ch_nfe(
        self, interested: Cnpj | Cpf, key: AccessKey | str, c_uf_autor: str | int | None = None
    ) -> DistributionReply:
        try:
            access_key = key if isinstance(key, AccessKey) else AccessKey.parse(key)
        except InvalidIdentifier as exc:
            raise RequestInvalid(exc.message) from exc
        return self.query(interested, ConsChNFe(access_key), c_uf_autor)

    def query(self, interested: Cnpj | Cpf, query: Query, c_uf_autor: str | int | None = None) -> DistributionReply:
        """Build, validate, send and read one request; raises RequestInvalid or CommunicationError."""
        payload = build_request(self.product, self.environment, interested, query, c_uf_autor)
        reply = post_soap(self.http_client, self.endpoint_url, self.binding, payload, expect=RESULT_ELEMENT)
        try:
            return parse_ret_dist(
                reply.element,
                product=self.product,
                operation=query.operation,
                request_bytes=reply.request,
                response_bytes=reply.content,
                elapsed_ms=reply.elapsed_ms,
                http_status=reply.status,
            )
        except MalformedResponse as exc:
            exc.url = self.endpoint_url
            raise


def read_archived_reply(product: Product, response: bytes, request: bytes = b"") -> DistributionReply:
    """An archived SOAP answer read again exactly as a live one is (reprocessing without a new
    query); raises ``MalformedResponse`` (and friends) as :meth:`DistributionClient.query` does."""
    _soap_ns, element = parse_reply(200, response, RESULT_ELEMENT)
    return parse_ret_dist(
        element,
        product=product,
        operation=Operation.CONS_NSU if b"<consNSU>" in request else Operation.DIST_NSU,
        request_bytes=request,
        response_bytes=response,
    )


def _nsu(value: int | Nsu) -> Nsu:
    if isinstance(value, Nsu):
        return value
    try:
        return Nsu(value)
    except InvalidIdentifier as exc:
        raise RequestInvalid(exc.message) from exc
