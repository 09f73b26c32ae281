"""Publishing: third parties issue documents and the national environment queues them per party.

Who gets what (protocol.md §1.7, §2, §4.2; seed 000 §3):
- NF-e: the recipient gets resNFe until it manifests (any manifestation except 210220 releases the
  nfeProc under a NEW NSU); transporter and autXML parties get the nfeProc; the emitter never gets
  its own NF-e but gets the manifestation events; cancellation and CC-e go to the recipient
  (resEvento before manifestation, procEventoNFe after), transporter and autXML parties.
- CT-e: emit, rem, exped, receb, dest and toma get the cteProc and its events.
- NFS-e: prestador, tomador and intermediário get the NFS-e and its events (the emitter too).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypedDict, Unpack

from app.core import event_types as ev
from app.sandbox.context import Context
from app.sandbox.docgen import Party
from app.sandbox.payload import Payload, as_payload
from app.sandbox.state import CteRecord, Entry, NfeRecord, NfseRecord

MANIFESTATIONS = (ev.CONFIRMACAO, ev.CIENCIA, ev.DESCONHECIMENTO, ev.NAO_REALIZADA)
ISSUE_LEAD = timedelta(minutes=2)  # dhEmi a little before the AN receives the authorised document

PartyLike = Party | str


class NfeContent(TypedDict, total=False):
    """What ``DocumentFactory.nfe`` may set in an NF-e beyond its parties (its defaults otherwise)."""

    total_cents: int | None
    items: int
    serie: int
    reform: bool | None  # the tax reform's groups (docgen.reform)
    note: tuple[str, str] | None  # a nota de crédito or de débito: (finNFe, the key it adjusts)


class NfeOptions(NfeContent, total=False):
    """An issued NF-e's optional parties and time of issue, with its content."""

    transporter: PartyLike | None
    aut_xml: Sequence[str]
    at: datetime | None


class Publisher:
    """Turns generated documents into queue entries; used by scenarios, tests and the event services."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.parties: dict[str, Party] = {}

    # --- parties -----------------------------------------------------------------------------
    def register(self, party: Party) -> Party:
        self.parties[party.doc] = party
        return party

    def party(self, who: PartyLike) -> Party:
        if isinstance(who, Party):
            return self.parties.setdefault(who.doc, who)
        known = self.parties.get(who)
        if known is not None:  # already a clean document number (the usual case)
            return known
        doc = "".join(ch for ch in who if ch.isalnum()).upper()
        known = self.parties.get(doc)
        if known is None:
            known = self.register(Party(doc=doc, name=f"EMPRESA {doc}"))
        return known

    # --- queueing ----------------------------------------------------------------------------
    def queue(
        self,
        product: str,
        doc: str,
        kind: str,
        xml: bytes | Payload,
        key: str,
        at: datetime,
        tp_evento: str | None = None,
    ) -> Entry:
        with self.ctx.state.lock:
            entry = self.ctx.state.ledger(product, doc).append(
                product=product, kind=kind, payload=as_payload(xml), key=key, published_at=at, tp_evento=tp_evento
            )
            self.ctx.referee.published(product, doc, entry.nsu, at, key, kind)
            return entry

    def _when(self, at: datetime | None) -> datetime:
        return at if at is not None else self.ctx.clock.now()

    # --- NF-e --------------------------------------------------------------------------------
    def nfe(self, emitter: PartyLike, recipient: PartyLike, **options: Unpack[NfeOptions]) -> Any:
        """Issue an NF-e now (or ``at``) and queue it; returns the docgen ``GeneratedNFe``."""
        when = options["at"] = self._when(options.get("at"))
        return self.publish_issued_nfe(self.issue_nfe(emitter, recipient, **options), when)

    def issue_nfe(self, emitter: PartyLike, recipient: PartyLike, **options: Unpack[NfeOptions]) -> Any:
        """The NF-e its issuer authorises for publication at ``at``, not yet known to anyone (a
        simulation writes its month's notes before the month: :meth:`publish_issued_nfe` then)."""
        when = self._when(options.pop("at", None))
        carrier = options.pop("transporter", None)
        aut_xml = tuple(options.pop("aut_xml", ()))
        return self.ctx.factory.nfe(
            emitter=self.party(emitter),
            recipient=self.party(recipient),
            transporter=self.party(carrier) if carrier is not None else None,
            aut_xml=aut_xml,
            issued_at=when - ISSUE_LEAD,
            **options,
        )

    def publish_issued_nfe(self, generated: Any, at: datetime | None = None) -> Any:
        """Queue an NF-e of :meth:`issue_nfe` for its parties (NSUs are given now)."""
        when = self._when(at)
        em, rc, tr, aut_xml = generated.emitter, generated.recipient, generated.transporter, generated.aut_xml
        record = NfeRecord(
            generated=generated,
            emitter=em.doc,
            recipient=rc.doc,
            transporter=tr.doc if tr else None,
            aut_xml=aut_xml,
            published_at=when,
        )
        with self.ctx.state.lock:
            self.ctx.state.nfe[generated.key] = record
            if rc.doc != em.doc:
                self.queue("nfe", rc.doc, "resNFe", generated.res_payload, generated.key, when)
            for doc in _distinct([tr.doc] if tr else [], aut_xml, exclude=(em.doc, rc.doc)):
                self.queue("nfe", doc, "procNFe", generated.proc_payload, generated.key, when)
        return generated

    def nfe_event(
        self,
        nfe: Any,
        tp_evento: str,
        author: PartyLike | None = None,
        *,
        seq: int = 1,
        at: datetime | None = None,
        justification: str | None = None,
        correction: str | None = None,
    ) -> Any:
        """An event by a third party (cancellation 110111, CC-e 110110, a manifestation made elsewhere...)."""
        when = self._when(at)
        key = nfe if isinstance(nfe, str) else nfe.key
        record = self.ctx.state.nfe[key]
        if author is None:
            author = record.recipient if tp_evento in MANIFESTATIONS else record.emitter
        event = self.ctx.factory.nfe_event(
            record.generated,
            tp_evento=tp_evento,
            author=self.party(author),
            seq=seq,
            at=when,
            justification=justification,
            correction=correction,
        )
        with self.ctx.state.lock:
            if tp_evento in MANIFESTATIONS:
                record.events[(tp_evento, seq)] = when
                self.on_manifestation(record, event, tp_evento, when)
                return event
            if tp_evento == ev.CANCELLATION:
                record.cancelled = True
            if tp_evento in (ev.CANCELLATION, ev.CORRECTION_LETTER):
                if record.recipient != record.emitter:
                    if record.released_to_recipient:
                        self.queue("nfe", record.recipient, "procEventoNFe", event.proc_payload, key, when, tp_evento)
                    else:
                        self.queue("nfe", record.recipient, "resEvento", event.res_payload, key, when, tp_evento)
                extra = [record.transporter] if record.transporter else []
                for doc in _distinct(extra, record.aut_xml, exclude=(record.emitter, record.recipient)):
                    self.queue("nfe", doc, "procEventoNFe", event.proc_payload, key, when, tp_evento)
            else:  # fisco / CT-e registration / Suframa events go to the emitter
                self.queue("nfe", record.emitter, "procEventoNFe", event.proc_payload, key, when, tp_evento)
        return event

    def on_manifestation(self, record: NfeRecord, event: Any, tp_evento: str, at: datetime) -> None:
        """A registered manifestation: release the nfeProc (not for 210220), tell emitter and recipient."""
        key = record.generated.key
        with self.ctx.state.lock:
            if tp_evento != ev.DESCONHECIMENTO and not record.released_to_recipient:
                record.released_to_recipient = True
                self.queue("nfe", record.recipient, "procNFe", record.generated.proc_payload, key, at)
            if record.emitter != record.recipient:
                self.queue("nfe", record.emitter, "procEventoNFe", event.proc_payload, key, at, tp_evento)
            self.queue("nfe", record.recipient, "procEventoNFe", event.proc_payload, key, at, tp_evento)

    # --- CT-e --------------------------------------------------------------------------------
    def cte(
        self,
        emitter: PartyLike,
        sender: PartyLike,
        recipient: PartyLike,
        *,
        taker_role: int = 0,
        taker: PartyLike | None = None,
        expeditor: PartyLike | None = None,
        receiver: PartyLike | None = None,
        at: datetime | None = None,
        **options: Any,
    ) -> Any:
        when = self._when(at)
        generated = self.ctx.factory.cte(
            emitter=self.party(emitter),
            sender=self.party(sender),
            recipient=self.party(recipient),
            taker_role=taker_role,
            taker=self.party(taker) if taker is not None else None,
            expeditor=self.party(expeditor) if expeditor is not None else None,
            receiver=self.party(receiver) if receiver is not None else None,
            issued_at=when - ISSUE_LEAD,
            **options,
        )
        docs = tuple(_distinct([p.doc for p in generated.parties.values()], ()))
        with self.ctx.state.lock:
            self.ctx.state.cte[generated.key] = CteRecord(generated, docs, when)
            for doc in docs:
                self.queue("cte", doc, "procCTe", generated.cte_proc, generated.key, when)
        return generated

    def cte_event(
        self, cte: Any, tp_evento: str, author: PartyLike | None = None, *, seq: int = 1, at: datetime | None = None
    ) -> Any:
        when = self._when(at)
        key = cte if isinstance(cte, str) else cte.key
        record = self.ctx.state.cte[key]
        who = self.party(author) if author is not None else self.party(record.generated.parties["emit"])
        event = self.ctx.factory.cte_event(record.generated, tp_evento=tp_evento, author=who, seq=seq, at=when)
        with self.ctx.state.lock:
            for doc in record.parties:
                self.queue("cte", doc, "procEventoCTe", event.proc_payload, key, when, tp_evento)
        return event

    # --- NFS-e -------------------------------------------------------------------------------
    def nfse(
        self,
        provider: PartyLike,
        taker: PartyLike | None,
        intermediary: PartyLike | None = None,
        *,
        at: datetime | None = None,
        **options: Any,
    ) -> Any:
        when = self._when(at)
        generated = self.ctx.factory.nfse(
            provider=self.party(provider),
            taker=self.party(taker) if taker is not None else None,
            intermediary=self.party(intermediary) if intermediary is not None else None,
            issued_at=when - ISSUE_LEAD,
            **options,
        )
        parties = {role: p.doc for role, p in generated.parties.items() if p is not None}
        with self.ctx.state.lock:
            self.ctx.state.nfse[generated.key] = NfseRecord(generated, parties, when)
            for doc in _distinct(parties.values(), ()):
                self.queue("nfse", doc, "NFSE", generated.nfse, generated.key, when)
        return generated

    def nfse_event(
        self,
        nfse: Any,
        code: str,
        author: PartyLike | None = None,
        *,
        at: datetime | None = None,
        ped_reg_evento: bytes | None = None,
    ) -> Any:
        when = self._when(at)
        key = nfse if isinstance(nfse, str) else nfse.key
        record = self.ctx.state.nfse[key]
        who = self.party(author) if author is not None else self.party(next(iter(record.parties.values())))
        event = self.ctx.factory.nfse_event(
            record.generated, code=code, author=who, at=when, ped_reg_evento=ped_reg_evento
        )
        with self.ctx.state.lock:
            record.events[code] = when
            for doc in _distinct(record.parties.values(), ()):
                self.queue("nfse", doc, "EVENTO", event.evento, key, when, code)
        return event


def _distinct(first: Iterable[str], second: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    seen = set(exclude)
    out: list[str] = []
    for doc in (*first, *second):
        if doc and doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out
