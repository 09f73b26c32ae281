"""Documents as they go in and come out of the store: inputs, parties, NFS-e details, versions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.core.products import Product

if TYPE_CHECKING:  # a value only the capture sets: the window's records load no XML reader
    from app.documents.reform_model import ReformValues

# How complete a document version is: a fuller version becomes the current one, a poorer one
# (a resNFe fetched again after the nfeProc) only joins the history.
KIND_RANK: dict[DocumentKind, int] = {
    DocumentKind.UNKNOWN: 0,
    DocumentKind.RES_NFE: 1,
    DocumentKind.RES_EVENTO: 1,
    DocumentKind.DPS: 1,
    DocumentKind.NFE_PROC: 2,
    DocumentKind.CTE_PROC: 2,
    DocumentKind.NFSE: 2,
    DocumentKind.PROC_EVENTO_NFE: 2,
    DocumentKind.PROC_EVENTO_CTE: 2,
    DocumentKind.NFSE_EVENTO: 2,
}


@dataclass(frozen=True, slots=True)
class Party:
    role: PartyRole
    tax_id: str | None  # CNPJ (14) or CPF (11); None for a foreign party
    name: str | None = None


class Withheld(StrEnum):
    """Why a stored NFS-e is not listed, notified or exported yet (rule book §6.1, §6.4 item 8)."""

    CUTOFF = "cutoff"  # issued before the company's cutoff date, history not released
    OWN_ISSUED = "own_issued"  # the company is only the prestador and that capture is off


@dataclass(frozen=True, slots=True)
class NfseDetails:
    """What an NFS-e carries beyond the grid's columns: service, values, taxes, delivery.

    Values in centavos; rates as written (percent text). ``withheld`` holds the delivery rule
    that keeps it out of the lists (None: listed).
    """

    competence: date | None = None
    processed_at: datetime | None = None
    national_code: str | None = None  # cTribNac
    municipal_code: str | None = None  # cTribMun
    nbs: str | None = None
    description: str | None = None  # xDescServ
    incidence_code: str | None = None  # cLocIncid
    incidence_name: str | None = None
    service_cents: int | None = None  # vServ
    net_cents: int | None = None  # vLiq
    iss_rate: str | None = None
    iss_cents: int | None = None  # vISSQN
    retained_cents: int | None = None  # vTotalRet
    iss_retention: str | None = None  # tpRetISSQN
    intermediary_id: str | None = None
    ibscbs_base_cents: int | None = None
    ibscbs_total_cents: int | None = None  # vTotNF
    ibs_cents: int | None = None
    cbs_cents: int | None = None
    replaced_key: str | None = None  # subst/chSubstda
    withheld: Withheld | None = None


@dataclass(frozen=True, slots=True)
class DocumentInput:
    """One document as it arrived, with the metadata the parser extracted.

    ``xml`` is the exact bytes received; ``parse_error`` set means the document is kept in
    quarantine. ``total_cents`` is the total in centavos (vNF, vTPrest, vServ have 2 decimals).
    ``issued_at`` must be aware; its original UTC offset is kept beside the UTC instant.
    ``xml_gzip``, optional, is the gzip ``xml`` was inflated from (a docZip): the store keeps it
    instead of compressing ``xml`` again when its trailer matches ``xml``.
    """

    product: Product
    kind: DocumentKind
    xml: bytes
    access_key: str | None
    nsu: int | None = None
    schema: str | None = None
    model: str | None = None
    serie: int | None = None
    number: int | None = None
    emitter_id: str | None = None
    emitter_name: str | None = None
    recipient_id: str | None = None
    recipient_name: str | None = None
    parties: tuple[Party, ...] = ()
    total_cents: int | None = None
    issued_at: datetime | None = None
    direction: Direction = Direction.RECEIVED
    status: DocumentStatus = DocumentStatus.UNKNOWN
    situation: str | None = None
    parse_error: str | None = None
    xml_gzip: bytes | None = field(default=None, repr=False, compare=False)
    carried_keys: tuple[str, ...] = ()  # CT-e: the NF-e keys it carries (infNFe/chave)
    nfse: NfseDetails | None = None  # NFS-e: its service, values and taxes (table nfse_details)
    reform: ReformValues | None = None  # IBS/CBS/IS (table document_reform); None without the groups
    purpose: str | None = None  # NF-e finNFe (5 nota de crédito, 6 nota de débito)
    referenced_keys: tuple[str, ...] = ()  # NF-e: ide/NFref/refNFe (table nfe_references)


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """What ``store_document`` did: ids plus flags the engine uses to notify or schedule."""

    document_id: int
    version_id: int
    created: bool  # first time this document was seen
    new_version: bool  # these bytes were not stored before
    became_current: bool  # this version now drives the document's metadata
    nsu_was_new: bool  # the NSU had not been recorded (False also when no NSU)


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """One grid row."""

    id: int
    company_id: int
    product: Product
    kind: DocumentKind
    access_key: str | None
    nsu: int | None
    model: str | None
    serie: int | None
    number: int | None
    emitter_id: str | None
    emitter_name: str | None
    recipient_id: str | None
    recipient_name: str | None
    total_cents: int | None
    issued_at: datetime | None
    issued_offset_minutes: int | None
    direction: Direction
    status: DocumentStatus
    situation: str | None
    quarantined: bool
    parse_error: str | None
    version_count: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class DocumentVersionInfo:
    id: int
    document_id: int
    kind: DocumentKind
    nsu: int | None
    schema: str | None
    sha256: str
    size: int
    is_current: bool
    received_at: datetime
