"""DocumentFactory: the generator's entry point, holding the seed, numbering and the issuers' certificates."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import datetime

from app.sandbox.docgen.common import Party, Signers
from app.sandbox.docgen.cte import GeneratedCTe, build_cte, build_cte_event
from app.sandbox.docgen.nfe import GeneratedNFe, build_nfe
from app.sandbox.docgen.nfe_events import GeneratedEvent, build_nfe_event, nfe_event_from_signed
from app.sandbox.docgen.nfse import GeneratedNfse, GeneratedNfseEvent, build_nfse, build_nfse_event
from app.sandbox.pki import IssuedCert, TestPki


class DocumentFactory:
    """Realistic, XSD-valid, signed fiscal documents, reproducible for a given ``seed``.

    Every issuer gets an e-CNPJ (or e-CPF) from ``pki`` on first use, cached with its key, and
    its own number sequence per model. Thread-safe: the services may generate from several threads.
    """

    def __init__(self, pki: TestPki, *, seed: int = 0, tp_amb: int = 2) -> None:
        self.pki = pki
        self.tp_amb = tp_amb
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

    def nfe(
        self,
        *,
        emitter: Party,
        recipient: Party,
        issued_at: datetime,
        total_cents: int | None = None,
        transporter: Party | None = None,
        aut_xml: Sequence[str] = (),
        items: int = 3,
        serie: int = 1,
    ) -> GeneratedNFe:
        seed, number, seq = self._next_seed(emitter.doc, "55")
        return build_nfe(
            self._signers,
            seed,
            emitter=emitter,
            recipient=recipient,
            issued_at=issued_at,
            number=number,
            serie=serie,
            tp_amb=self.tp_amb,
            total_cents=total_cents,
            transporter=transporter,
            aut_xml=aut_xml,
            items=items,
            protocol_seq=seq,
        )

    def nfe_event(
        self,
        nfe: GeneratedNFe,
        *,
        tp_evento: str,
        author: Party,
        seq: int,
        at: datetime,
        justification: str | None = None,
        correction: str | None = None,
    ) -> GeneratedEvent:
        rng, _, protocol_seq = self._next(author.doc, "event")
        return build_nfe_event(
            self._signers,
            rng,
            nfe,
            tp_evento=tp_evento,
            author=author,
            seq=seq,
            at=at,
            justification=justification,
            correction=correction,
            tp_amb=self.tp_amb,
            protocol_seq=protocol_seq,
        )

    def nfe_event_from_signed(
        self, nfe_key: str, signed_evento: bytes, *, at: datetime, c_stat: int = 135
    ) -> GeneratedEvent:
        _, _, protocol_seq = self._next("AN", "event")
        return nfe_event_from_signed(nfe_key, signed_evento, at=at, c_stat=c_stat, protocol_seq=protocol_seq)

    def cte(
        self,
        *,
        emitter: Party,
        sender: Party,
        recipient: Party,
        taker_role: int,
        taker: Party | None = None,
        expeditor: Party | None = None,
        receiver: Party | None = None,
        issued_at: datetime,
        modal: str = "01",
        total_cents: int | None = None,
        nfe_keys: Sequence[str] = (),
        serie: int = 1,
    ) -> GeneratedCTe:
        rng, number, seq = self._next(emitter.doc, "57")
        return build_cte(
            self._signers,
            rng,
            emitter=emitter,
            sender=sender,
            recipient=recipient,
            taker_role=taker_role,
            taker=taker,
            expeditor=expeditor,
            receiver=receiver,
            issued_at=issued_at,
            modal=modal,
            total_cents=total_cents,
            nfe_keys=nfe_keys,
            number=number,
            serie=serie,
            tp_amb=self.tp_amb,
            protocol_seq=seq,
        )

    def cte_event(self, cte: GeneratedCTe, *, tp_evento: str, author: Party, seq: int, at: datetime) -> GeneratedEvent:
        rng, _, protocol_seq = self._next(author.doc, "event")
        return build_cte_event(
            self._signers,
            rng,
            cte,
            tp_evento=tp_evento,
            author=author,
            seq=seq,
            at=at,
            tp_amb=self.tp_amb,
            protocol_seq=protocol_seq,
        )

    def nfse(
        self,
        *,
        provider: Party,
        taker: Party | None,
        intermediary: Party | None = None,
        issued_at: datetime,
        service_cents: int | None = None,
        with_ibscbs: bool = False,
        retained_cents: int = 0,
    ) -> GeneratedNfse:
        rng, number, _ = self._next(provider.doc, "nfse")
        return build_nfse(
            self._signers,
            rng,
            provider=provider,
            taker=taker,
            intermediary=intermediary,
            issued_at=issued_at,
            service_cents=service_cents,
            with_ibscbs=with_ibscbs,
            number=number,
            tp_amb=self.tp_amb,
            retained_cents=retained_cents,
        )

    def nfse_event(
        self,
        nfse: GeneratedNfse,
        *,
        code: str,
        author: Party,
        at: datetime,
        ped_reg_evento: bytes | None = None,
    ) -> GeneratedNfseEvent:
        rng, _, _ = self._next(author.doc, "nfse-event")
        with self._lock:
            seq = self._nfse_event_seq.get((nfse.key, code), 0) + 1
            self._nfse_event_seq[(nfse.key, code)] = seq
            self._n_dfse += 1
            n_dfse = self._n_dfse
        return build_nfse_event(
            self._signers,
            rng,
            nfse,
            code=code,
            author=author,
            at=at,
            ped_reg_evento=ped_reg_evento,
            seq=seq,
            n_dfse=n_dfse,
            tp_amb=self.tp_amb,
        )
