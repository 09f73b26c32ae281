"""What the stored events of a document change on its PDF, read by the documents readers.

An NF-e or CT-e prints "CANCELADA" when a registered cancellation of its key is among its events;
an NFS-e prints "CANCELADA" or "SUBSTITUÍDA". The events are read by ``app.documents`` (the same
readers the capture stores them with), so an event counts here exactly when it counts there; an
unreadable event marks nothing and the document still prints.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from lxml import etree

from app.core.cstat import CANCELLATION_REGISTERED_TEXT, EVENT_REGISTERED_TEXT
from app.core.event_types import CANCELLATION, NFSE_CANCELLATION_BY_SUBSTITUTION, NFSE_CANCELLING
from app.documents.model import DocumentDataError, EventMeta
from app.documents.nfe import read_nfe_root
from app.documents.nfse import NfseEventMeta, read_nfse_root
from app.safexml import XmlRejected, parse_xml

# Every NFS-e cancellation but the substitution, which prints as such.
_NFSE_CANCELLED = NFSE_CANCELLING - {NFSE_CANCELLATION_BY_SUBSTITUTION}


def _read(events: Iterable[bytes], reader: Callable[[etree._Element], object]) -> Iterable[object]:
    for raw in events:
        try:
            yield reader(parse_xml(raw))
        except (XmlRejected, DocumentDataError):
            continue


def registered_cancellation(key: str, events: Iterable[bytes], reader: Callable[[etree._Element], object]) -> bool:
    """Whether a cancellation (110111) of the NF-e or CT-e ``key`` among ``events`` was registered
    (cStat 135, 136 or 155; an event without an answer, a resEvento, counts too)."""
    for meta in _read(events, reader):
        if not isinstance(meta, EventMeta) or meta.tp_evento != CANCELLATION or meta.access_key != key:
            continue
        if meta.cstat is None or meta.cstat in CANCELLATION_REGISTERED_TEXT:
            return True
    return False


def registered_event(key: str, events: Iterable[bytes], types: Collection[str]) -> EventMeta | None:
    """The last (events come oldest first) NF-e event of ``key`` among ``types`` (a Ciência, a
    Confirmação...) that the SEFAZ registered (135, 136), else None."""
    found: EventMeta | None = None
    for meta in _read(events, read_nfe_root):
        if not isinstance(meta, EventMeta) or meta.access_key != key or meta.tp_evento not in types:
            continue
        if meta.cstat in EVENT_REGISTERED_TEXT:
            found = meta
    return found


def nfse_marks(key: str, events: Iterable[bytes]) -> tuple[bool, bool]:
    """(cancelled, substituted) from the stored events (or event requests) of the NFS-e ``key``."""
    cancelled = substituted = False
    for meta in _read(events, read_nfse_root):
        if not isinstance(meta, NfseEventMeta) or meta.access_key != key.upper():
            continue
        cancelled |= meta.tp_evento in _NFSE_CANCELLED
        substituted |= meta.tp_evento == NFSE_CANCELLATION_BY_SUBSTITUTION
    return cancelled, substituted
