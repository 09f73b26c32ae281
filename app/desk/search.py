"""The grid's one search field: a key (typed, pasted or read by a barcode scanner), a CNPJ/CPF,
a number or a name, told apart by their shape."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey, NfseKey

MAX_NUMBER_DIGITS = 15  # nNF has 9, NFS-e nNFSe up to 13, nCT 9


@dataclass(frozen=True, slots=True)
class Search:
    """What the text asks for; exactly one field is set (all None for an empty search)."""

    access_key: str | None = None
    counterpart_id: str | None = None
    number: int | None = None
    text: str | None = None


def parse_search(text: str | None) -> Search:
    raw = " ".join((text or "").split())
    if not raw:
        return Search()
    # A DANFE prints the key in groups of four; a CNPJ comes with dots, slash and dash.
    compact = "".join(ch for ch in raw if ch.isalnum()).upper()
    only_punctuation = all(ch.isalnum() or ch in " .-/" for ch in raw)
    if only_punctuation and len(compact) == 44:
        try:
            return Search(access_key=AccessKey.parse(compact).value)
        except ValueError:
            return Search(access_key=compact)  # mistyped: searched as typed, found by no document
    if only_punctuation and len(compact) == 50:
        try:
            return Search(access_key=NfseKey.parse(compact).value)
        except ValueError:
            return Search(access_key=compact)
    if only_punctuation and len(compact) == 14:
        try:
            return Search(counterpart_id=Cnpj.parse(compact).value)
        except ValueError:
            pass
    if only_punctuation and len(compact) == 11 and compact.isdigit():
        try:
            return Search(counterpart_id=Cpf.parse(compact).value)
        except ValueError:
            pass
    if raw.isdigit() and len(raw) <= MAX_NUMBER_DIGITS:
        return Search(number=int(raw))
    return Search(text=raw)
