"""The conclusive manifestations registered for a key: what the facade refuses to send again and
what the window's rectification explains. Light on purpose (core, labels and records only): the
window imports it at start without loading the capture stack."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.core.manifestation import CONCLUSIVE_TYPES, manifestation_type
from app.desk.labels import brasilia_text
from app.store.records import EventRecord, Manifestation, ManifestationStatus


@dataclass(frozen=True, slots=True)
class Registered:
    """A conclusive event registered for a key (by this office or by another system)."""

    tp_evento: str
    n_seq_evento: int
    at: datetime | None
    protocol: str | None

    def text(self) -> str:
        """ "A Confirmação da Operação já foi registrada em 02/12/2026 10:15 (protocolo 891...)"."""
        protocol = f" (protocolo {self.protocol})" if self.protocol else ""
        return f"A {manifestation_type(self.tp_evento).label} já foi registrada em {brasilia_text(self.at)}{protocol}"


def registered_conclusive(events: Iterable[EventRecord], requests: Iterable[Manifestation]) -> list[Registered]:
    """The key's registered conclusive events, oldest first: the stored events (ours and those
    another system registered) and this office's accepted requests (before their event arrives)."""
    found: dict[tuple[str, int], Registered] = {}
    for m in requests:
        if m.tp_evento in CONCLUSIVE_TYPES and m.status is ManifestationStatus.ACCEPTED:
            found[(m.tp_evento, m.n_seq_evento)] = Registered(m.tp_evento, m.n_seq_evento, m.updated_at, m.protocol)
    for e in events:
        if e.tp_evento in CONCLUSIVE_TYPES:
            known = found.get((e.tp_evento, e.n_seq_evento))
            protocol = e.protocol or (known.protocol if known else None)
            found[(e.tp_evento, e.n_seq_evento)] = Registered(
                e.tp_evento, e.n_seq_evento, e.event_at or e.created_at, protocol
            )
    return sorted(found.values(), key=lambda r: (r.at is None, r.at or datetime.min, r.n_seq_evento))
