"""What the national environment holds: per interested party and product, an NSU-numbered queue.

Every party (CNPJ or CPF) has, per product (``nfe``, ``cte``, ``nfse``), its own NSU sequence
starting at 1. Documents older than the retention window (3 months) are no longer distributed.
All mutation happens under the sandbox lock held by the caller (:class:`SandboxState.lock`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.sandbox.payload import Payload

RETENTION = timedelta(days=90)
PRODUCTS = ("nfe", "cte", "nfse")


@dataclass(frozen=True, slots=True)
class Entry:
    """One distributed document in one party's queue."""

    nsu: int
    product: str
    kind: str  # resNFe, procNFe, resEvento, procEventoNFe, procCTe, procEventoCTe, NFSE, EVENTO
    payload: Payload  # shared by every queue the document is in
    key: str
    published_at: datetime
    tp_evento: str | None = None  # for events
    schema_label: str | None = None  # overrides the docZip @schema (fault "wrong_schema")

    @property
    def xml(self) -> bytes:
        return self.payload.xml


@dataclass
class Ledger:
    """The NSU sequence of one party for one product."""

    entries: list[Entry] = field(default_factory=list)

    @property
    def max_nsu(self) -> int:
        return self.entries[-1].nsu if self.entries else 0

    def append(self, **kwargs: Any) -> Entry:
        entry = Entry(nsu=self.max_nsu + 1, **kwargs)
        self.entries.append(entry)
        return entry

    def after(self, nsu: int, now: datetime, limit: int, *, until: datetime | None = None) -> list[Entry]:
        """Up to ``limit`` entries after ``nsu`` still in the window; ``until``: only those the
        queue held then (a query played later than it happened, see ``max_nsu_at``)."""
        oldest = now - RETENTION
        out: list[Entry] = []
        # Append-only with NSU = position + 1: the scan starts right after ``nsu`` (from the
        # start it cost a month's simulation more and more, up to 7% of its last days).
        entries = self.entries
        for index in range(max(nsu, 0), len(entries)):
            entry = entries[index]
            if until is not None and entry.published_at > until:
                break
            if entry.published_at >= oldest:
                out.append(entry)
                if len(out) >= limit:
                    break
        return out

    def max_nsu_at(self, instant: datetime) -> int:
        """The maxNSU the queue had at ``instant`` (entries are appended as they are published)."""
        entries = self.entries
        index = len(entries)
        while index and entries[index - 1].published_at > instant:
            index -= 1
        return entries[index - 1].nsu if index else 0

    def at(self, nsu: int, now: datetime) -> Entry | None:
        if 1 <= nsu <= len(self.entries):
            entry = self.entries[nsu - 1]
            if entry.nsu == nsu and entry.published_at >= now - RETENTION:
                return entry
        return None


@dataclass
class NfeRecord:
    """An NF-e known to the AN and what happened to it."""

    generated: Any  # docgen GeneratedNFe
    emitter: str
    recipient: str
    transporter: str | None
    aut_xml: tuple[str, ...]
    published_at: datetime
    released_to_recipient: bool = False
    cancelled: bool = False
    # (tpEvento, nSeqEvento) -> registration time, for manifestation events
    events: dict[tuple[str, int], datetime] = field(default_factory=dict)


@dataclass
class CteRecord:
    generated: Any  # docgen GeneratedCTe
    parties: tuple[str, ...]
    published_at: datetime


@dataclass
class NfseRecord:
    generated: Any  # docgen GeneratedNfse
    parties: dict[str, str]  # role -> doc
    published_at: datetime
    events: dict[str, datetime] = field(default_factory=dict)  # code -> time


class SandboxState:
    """Queues and document registries. One lock guards everything (simple and fast enough)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.ledgers: dict[tuple[str, str], Ledger] = {}
        self.nfe: dict[str, NfeRecord] = {}
        self.cte: dict[str, CteRecord] = {}
        self.nfse: dict[str, NfseRecord] = {}

    def ledger(self, product: str, doc: str) -> Ledger:
        key = (product, doc)
        ledger = self.ledgers.get(key)
        if ledger is None:
            ledger = self.ledgers[key] = Ledger()
        return ledger

    def parties(self, product: str) -> list[str]:
        return [doc for (p, doc) in self.ledgers if p == product]
