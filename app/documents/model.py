"""Metadata read from one distributed NF-e document or event, plus who the company is in it.

Plain frozen dataclasses, no XML objects inside: engines, threads and the UI hold them freely, and
:func:`to_json_dict` makes them JSON. Kinds, roles, status and direction are the domain's enums
(app.core.documents), the same the store keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.core.errors import CapturaError
from app.core.ids import Cnpj, Cpf
from app.documents.reform_model import ReformItem, ReformValues

# ---------------------------------------------------------------- errors


class DocumentError(CapturaError):
    """Base of the refusals of well-formed XML whose content cannot be taken as a fiscal document.

    ``reason`` is a stable machine word for logs and tests; the message is for the user.
    Parse failures stay ``app.safexml`` errors (``XmlRejected``).
    """

    reason: str = "document"


class DocumentDataError(DocumentError):
    """A recognised document whose identifying data is wrong (invalid key, event type, sequence)."""

    reason = "invalid_data"


class UnsupportedDocument(DocumentError):
    """A root element this reader does not know, when the caller asked for a known document only."""

    reason = "unsupported"


# ---------------------------------------------------------------- metadata


@dataclass(frozen=True, slots=True)
class PartyInfo:
    """One party: ``doc`` is the CNPJ (14, upper case) or CPF (11) as written, None for a foreigner
    (``foreign_id`` then holds ``idEstrangeiro``, which may be empty)."""

    role: PartyRole
    doc: str | None
    name: str | None = None
    ie: str | None = None
    uf: str | None = None
    foreign_id: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentHead:
    """What every NF-e and CT-e reading starts with: its kind and root, the layout version, the
    key and the key's parts (UF, model, serie, number), and when it was issued."""

    kind: DocumentKind
    root: str
    version: str | None
    access_key: str
    uf: str | None
    model: str
    serie: int | None
    number: int | None
    issued_at: datetime | None


@dataclass(frozen=True, slots=True)
class EventHead:
    """What every event reading (NF-e, CT-e, NFS-e) starts with: its kind, root and version, the
    key of the document it belongs to, its type and sequence, description and author."""

    kind: DocumentKind
    root: str
    version: str | None
    access_key: str
    tp_evento: str
    n_seq_evento: int
    description: str | None
    author_doc: str | None


@dataclass(frozen=True, slots=True)
class NfeMeta(DocumentHead):
    """An NF-e: a full ``nfeProc`` (or a bare signed ``NFe`` from an import) or its ``resNFe`` summary.

    ``total_cents`` is vNF in centavos, exact from the decimal text; ``total_nf_tot_cents`` is the
    ``vNFTot`` of the IBS/CBS reform (NT 2025.002) when present. ``issued_at`` keeps the offset
    written in ``dhEmi``; a 2.00-era ``dEmi`` (date only) becomes 00:00 at -03:00.
    ``situation`` is resNFe's ``cSitNFe`` (1 autorizada, 2 denegada, 3 cancelada).
    ``warnings`` lists tolerated faults (a party with an invalid CNPJ, a key/emitter mismatch...).
    """

    emitter: PartyInfo | None
    recipient: PartyInfo | None = None
    transporter: PartyInfo | None = None
    authorised: tuple[str, ...] = ()
    total_cents: int | None = None
    total_nf_tot_cents: int | None = None
    operation_type: int | None = None  # tpNF: 0 entrada, 1 saída
    environment: int | None = None  # tpAmb: 1 produção, 2 homologação
    protocol: str | None = None  # nProt
    authorised_at: datetime | None = None  # dhRecbto
    cstat: str | None = None  # protNFe/infProt/cStat
    reason: str | None = None  # protNFe/infProt/xMotivo
    situation: str | None = None
    dig_val: str | None = None
    status: DocumentStatus = DocumentStatus.UNKNOWN
    warnings: tuple[str, ...] = ()
    purpose: str | None = None  # finNFe: 1 normal ... 5 nota de crédito, 6 nota de débito
    referenced_keys: tuple[str, ...] = ()  # ide/NFref/refNFe, in order, once each
    reform: ReformValues | None = None  # IBS/CBS/IS (NT 2025.002-RTC); None without the groups

    @property
    def issued_offset_minutes(self) -> int | None:
        offset = self.issued_at.utcoffset() if self.issued_at is not None else None
        return None if offset is None else int(offset.total_seconds() // 60)

    @property
    def parties(self) -> tuple[PartyInfo, ...]:
        """Emitter, recipient, transporter and each autXML, in that order (the store's party rows)."""
        found = [p for p in (self.emitter, self.recipient, self.transporter) if p is not None]
        found.extend(PartyInfo(PartyRole.AUTHORISED, doc) for doc in self.authorised)
        return tuple(found)


@dataclass(frozen=True, slots=True)
class CteMeta(DocumentHead):
    """A CT-e (model 57) or CT-e OS (model 67): a ``cteProc``/``cteOSProc`` or a bare signed one.

    Parties: emitter, sender (rem), shipper (exped), receiver (receb), recipient (dest) and the
    payer (``taker``: toma3 names one of the four, toma4 carries its own party; CT-e OS has
    ``toma``). ``nfe_keys`` are the NF-e carried (infDoc/infNFe/chave), in order, once each.
    ``total_cents`` is vTPrest; ``modal`` the two-digit code (01 rodoviário ... 06 multimodal).
    """

    cte_type: str | None  # tpCTe: 0 normal, 1 complemento, 2 anulação, 3 substituto
    modal: str | None
    emitter: PartyInfo | None
    sender: PartyInfo | None = None
    shipper: PartyInfo | None = None
    receiver: PartyInfo | None = None
    recipient: PartyInfo | None = None
    taker: PartyInfo | None = None
    taker_code: str | None = None  # toma3/toma: 0 rem, 1 exped, 2 receb, 3 dest; 4: toma4
    authorised: tuple[str, ...] = ()
    nfe_keys: tuple[str, ...] = ()
    total_cents: int | None = None
    environment: int | None = None
    protocol: str | None = None
    authorised_at: datetime | None = None
    cstat: str | None = None
    reason: str | None = None
    status: DocumentStatus = DocumentStatus.UNKNOWN
    situation: str | None = None
    warnings: tuple[str, ...] = ()
    reform: ReformValues | None = None  # imp/IBSCBS (NT 2025.001-RTC); None without the group

    @property
    def parties(self) -> tuple[PartyInfo, ...]:
        """Every party as the store keeps it (one row per role), then each autXML."""
        found = [
            p
            for p in (self.emitter, self.sender, self.shipper, self.receiver, self.recipient, self.taker)
            if p is not None
        ]
        found.extend(PartyInfo(PartyRole.AUTHORISED, doc) for doc in self.authorised)
        return tuple(found)


@dataclass(frozen=True, slots=True)
class EventMeta(EventHead):
    """An NF-e event: ``resEvento`` summary, full ``procEventoNFe`` (or a bare ``evento`` import).

    ``access_key`` is the ``chNFe`` the event is linked to; events of other documents (CT-e 610600,
    MDF-e 610610, Suframa 990900...) come the same way and are kept as they are.
    ``registered_at`` is ``dhRegEvento`` (procEventoNFe) or ``dhRecbto`` (resEvento); ``cstat`` is the
    retEvento's (a resEvento has none). ``recipient_doc`` is retEvento's CNPJDest/CPFDest.
    """

    c_orgao: str | None
    event_at: datetime | None
    protocol: str | None
    cstat: str | None = None
    reason: str | None = None  # retEvento xMotivo
    registered_at: datetime | None = None
    environment: int | None = None
    justification: str | None = None  # xJust (cancellation 110111, 210220/210240)
    correction: str | None = None  # xCorrecao (CC-e 110110)
    recipient_doc: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UnknownMeta:
    """Well-formed XML this reader does not know: kept and shown, never dropped."""

    root: str
    namespace: str | None
    version: str | None
    schema: str | None = None
    kind: DocumentKind = DocumentKind.UNKNOWN
    access_key: None = None
    warnings: tuple[str, ...] = ()


DocumentMeta = NfeMeta | CteMeta | EventMeta | UnknownMeta


# ---------------------------------------------------------------- roles and direction


def _company_id(company: str | Cnpj | Cpf) -> str:
    return company.value if isinstance(company, Cnpj | Cpf) else company.strip().upper()


def roles_of(company: str | Cnpj | Cpf, meta: DocumentMeta) -> frozenset[PartyRole]:
    """The roles ``company`` (full CNPJ or CPF: document parties are establishments) holds in ``meta``.

    For an event: EMITTER when the company authored it, RECIPIENT when it is retEvento's
    CNPJDest/CPFDest. A resNFe only names the emitter.
    """
    me = _company_id(company)
    if isinstance(meta, NfeMeta):
        roles: set[PartyRole] = set()
        for party in (meta.emitter, meta.recipient, meta.transporter):
            if party is not None and party.doc == me:
                roles.add(party.role)
        if me in meta.authorised:
            roles.add(PartyRole.AUTHORISED)
        return frozenset(roles)
    if isinstance(meta, CteMeta):
        held = {party.role for party in meta.parties if party.doc == me}
        return frozenset(held)
    if isinstance(meta, EventMeta):
        event_roles: set[PartyRole] = set()
        if meta.author_doc == me:
            event_roles.add(PartyRole.EMITTER)
        if meta.recipient_doc == me:
            event_roles.add(PartyRole.RECIPIENT)
        return frozenset(event_roles)
    return frozenset()


def direction_of(company: str | Cnpj | Cpf, meta: DocumentMeta) -> Direction:
    """ "emitted" only when the company is the emitter and holds no other role; else "received"."""
    return Direction.EMITTED if roles_of(company, meta) == {PartyRole.EMITTER} else Direction.RECEIVED


# ---------------------------------------------------------------- JSON


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PartyInfo | ReformValues | ReformItem):
        return to_json_dict(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value  # str (StrEnum included), int, None


def to_json_dict(
    meta: NfeMeta | CteMeta | EventMeta | UnknownMeta | PartyInfo | ReformValues | ReformItem,
) -> dict[str, Any]:
    """The dataclass (or ``ReformItem`` tuple) as a dict ``json.dumps`` accepts (datetimes as ISO
    8601 with their offset)."""
    if isinstance(meta, ReformItem):
        return {name: _plain(value) for name, value in meta._asdict().items()}
    return {f.name: _plain(getattr(meta, f.name)) for f in fields(meta)}
