"""DocumentFactory: the generator's entry point, holding the seed, numbering and the issuers' certificates."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Required, TypedDict, Unpack

from app.sandbox.docgen.common import Party, Signers
from app.sandbox.docgen.cte import GeneratedCTe, build_cte, build_cte_event
from app.sandbox.docgen.nfe import GeneratedNFe, build_nfe
from app.sandbox.docgen.nfe_events import GeneratedEvent, build_nfe_event, nfe_event_from_signed
from app.sandbox.docgen.nfse import GeneratedNfse, GeneratedNfseEvent, build_nfse, build_nfse_event
from app.sandbox.docgen.reform import reform_rates
from app.sandbox.pki import IssuedCert, TestPki

# What each document of the factory takes: its builder's keywords (and their defaults there)
# except what the factory gives itself (numbering, protocol sequence, environment).


class IssuedSpec(TypedDict, total=False):
    """What an NF-e and a CT-e both take: the issuer, the recipient, when, the total, the serie."""

    emitter: Required[Party]
    recipient: Required[Party]
    issued_at: Required[datetime]
    total_cents: int | None
    serie: int


class NfeSpec(IssuedSpec, total=False):
    transporter: Party | None
    aut_xml: Sequence[str]
    items: int
    note: tuple[str, str] | None  # a nota de crédito ("5") or de débito ("6") and the key it adjusts


class EventSpec(TypedDict):
    tp_evento: str
    author: Party
    seq: int
    at: datetime


class NfeEventSpec(EventSpec, total=False):
    justification: str | None
    correction: str | None


class CteSpec(IssuedSpec, total=False):
    sender: Required[Party]
    taker_role: Required[int]
    taker: Party | None
    expeditor: Party | None
    receiver: Party | None
    modal: str
    nfe_keys: Sequence[str]


class NfseSpec(TypedDict, total=False):
    provider: Required[Party]
    taker: Required[Party | None]
    issued_at: Required[datetime]
    intermediary: Party | None
    service_cents: int | None
    retained_cents: int


class NfseEventSpec(TypedDict, total=False):
    code: Required[str]
    author: Required[Party]
    at: Required[datetime]
    ped_reg_evento: bytes | None


class DocumentFactory:
    """Realistic, XSD-valid, signed fiscal documents, reproducible for a given ``seed``.

    Every issuer gets an e-CNPJ (or e-CPF) from ``pki`` on first use, cached with its key, and
    its own number sequence per model. Thread-safe: the services may generate from several threads.
    ``reform_share`` of the documents carry the tax reform's IBS/CBS groups (``docgen.reform``);
    a call's ``reform`` (``with_ibscbs`` for an NFS-e) True/False decides for that document.
    """

    def __init__(self, pki: TestPki, *, seed: int = 0, tp_amb: int = 2, reform_share: float = 0.0) -> None:
        self.pki = pki
        self.tp_amb = tp_amb
        self.reform_share = reform_share
        self._rng = random.Random(seed)
        self._signers = Signers(pki)
        self._lock = threading.Lock()
        self._numbers: dict[tuple[str, str], int] = {}
        self._protocol_seq = 0
        self._nfse_event_seq: dict[tuple[str, str], int] = {}
        self._n_dfse = 0

    def certificate(self, party: Party) -> IssuedCert:
        """The test certificate the factory signs ``party``'s documents with."""
        return self._signers.cert_for(party.doc, party.name)

    def prepare_signer(self, party: Party) -> None:
        """Make ``party``'s certificate and load its key now rather than at its first document
        (a key pair takes tens of milliseconds: a long simulation sets its issuers up first)."""
        self._signers.key_for(party.doc, party.name)

    def _next(self, doc: str, model: str) -> tuple[random.Random, int, int]:
        """A private RNG for one document, the issuer's next number and the next protocol sequence."""
        seed, number, protocol_seq = self._next_seed(doc, model)
        return random.Random(seed), number, protocol_seq

    def _next_seed(self, doc: str, model: str) -> tuple[int, int, int]:
        """``_next`` with the seed of the private RNG (a document that can be written again)."""
        with self._lock:
            number = self._numbers.get((doc, model))
            if number is None:
                number = self._rng.randrange(1, 5000)
            self._numbers[(doc, model)] = number + 1
            self._protocol_seq += 1
            return self._rng.getrandbits(64), number, self._protocol_seq

    def nfe(self, *, reform: bool | None = None, **spec: Unpack[NfeSpec]) -> GeneratedNFe:
        """``reform``: the tax reform's groups (True/False), or None: drawn (``reform_share``); a
        nota de crédito or de débito (``note``) always has them."""
        seed, number, seq = self._next_seed(spec["emitter"].doc, "55")
        rates = reform_rates(seed, self.reform_share, True if spec.get("note") else reform)
        return build_nfe(self._signers, seed, number=number, tp_amb=self.tp_amb, protocol_seq=seq, reform=rates, **spec)

    def nfe_event_from_signed(
        self, nfe_key: str, signed_evento: bytes, *, at: datetime, c_stat: int = 135
    ) -> GeneratedEvent:
        _, _, protocol_seq = self._next("AN", "event")
        return nfe_event_from_signed(nfe_key, signed_evento, at=at, c_stat=c_stat, protocol_seq=protocol_seq)

    def nfe_event(self, nfe: GeneratedNFe, **spec: Unpack[NfeEventSpec]) -> GeneratedEvent:
        rng, _, protocol_seq = self._next(spec["author"].doc, "event")
        return build_nfe_event(self._signers, rng, nfe, tp_amb=self.tp_amb, protocol_seq=protocol_seq, **spec)

    def cte(self, *, reform: bool | None = None, **spec: Unpack[CteSpec]) -> GeneratedCTe:
        seed, number, seq = self._next_seed(spec["emitter"].doc, "57")
        rates, rng = reform_rates(seed, self.reform_share, reform), random.Random(seed)
        return build_cte(self._signers, rng, number=number, tp_amb=self.tp_amb, protocol_seq=seq, reform=rates, **spec)

    def cte_event(self, cte: GeneratedCTe, **spec: Unpack[EventSpec]) -> GeneratedEvent:
        rng, _, protocol_seq = self._next(spec["author"].doc, "event")
        return build_cte_event(self._signers, rng, cte, tp_amb=self.tp_amb, protocol_seq=protocol_seq, **spec)

    def nfse(self, *, with_ibscbs: bool | None = None, **spec: Unpack[NfseSpec]) -> GeneratedNfse:
        seed, number, _ = self._next_seed(spec["provider"].doc, "nfse")
        rates, rng = reform_rates(seed, self.reform_share, with_ibscbs), random.Random(seed)
        return build_nfse(
            self._signers, rng, number=number, tp_amb=self.tp_amb, with_ibscbs=rates is not None, rates=rates, **spec
        )

    def nfse_event(self, nfse: GeneratedNfse, **spec: Unpack[NfseEventSpec]) -> GeneratedNfseEvent:
        code = spec["code"]
        rng, _, _ = self._next(spec["author"].doc, "nfse-event")
        with self._lock:
            seq = self._nfse_event_seq.get((nfse.key, code), 0) + 1
            self._nfse_event_seq[(nfse.key, code)] = seq
            self._n_dfse += 1
            n_dfse = self._n_dfse
        return build_nfse_event(self._signers, rng, nfse, seq=seq, n_dfse=n_dfse, tp_amb=self.tp_amb, **spec)
