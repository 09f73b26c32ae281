"""Events as they go in and come out of the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.core.documents import DocumentKind
from app.core.products import Product


@dataclass(frozen=True, slots=True)
class EventInput:
    """One event (resEvento, procEventoNFe, procEventoCTe, NFS-e evento) as it arrived;
    ``xml_gzip`` as in :class:`DocumentInput`."""

    product: Product
    kind: DocumentKind
    xml: bytes
    access_key: str
    tp_evento: str
    n_seq_evento: int = 1
    nsu: int | None = None
    schema: str | None = None
    description: str | None = None
    protocol: str | None = None
    event_at: datetime | None = None
    cstat: str | None = None
    author_id: str | None = None
    xml_gzip: bytes | None = field(default=None, repr=False, compare=False)
    substitute_key: str | None = None  # NFS-e cancellation by substitution (105102): chSubstituta


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    company_id: int
    product: Product
    kind: DocumentKind
    access_key: str
    tp_evento: str
    n_seq_evento: int
    nsu: int | None
    description: str | None
    protocol: str | None
    event_at: datetime | None
    cstat: str | None
    author_id: str | None
    sha256: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoredEvent:
    event_id: int
    created: bool
    replaced: bool  # a fuller form (procEvento) replaced a summary (resEvento)
    nsu_was_new: bool
