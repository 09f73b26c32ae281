"""The grid's one search field: a key (typed, pasted or read by a barcode scanner), a CNPJ/CPF,
a number or a name, told apart by their shape."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey, NfseKey, key_problem

MAX_NUMBER_DIGITS = 15  # nNF has 9, NFS-e nNFSe up to 13, nCT 9


@dataclass(frozen=True, slots=True)
class Search:
    """What the text asks for; exactly one field is set (all None for an empty search).

    ``key_problem`` says why a text shaped like a key is not one ("Chave com 43 dígitos: ...");
    such a key is still searched as typed (it finds nothing), and the grid says why.
    """

    access_key: str | None = None
    counterpart_id: str | None = None
    number: int | None = None
    text: str | None = None
    key_problem: str | None = None


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
        except ValueError:  # mistyped: searched as typed, found by no document
            return Search(access_key=compact, key_problem=key_problem(compact))
    if only_punctuation and len(compact) == 50:
        try:
            return Search(access_key=NfseKey.parse(compact).value)
        except ValueError:
            return Search(access_key=compact, key_problem=key_problem(compact))
    if only_punctuation and compact.isdigit() and len(compact) > MAX_NUMBER_DIGITS:
        # No number, CNPJ or CPF is that long: a key with a digit too many or too few.
        return Search(access_key=compact, key_problem=key_problem(compact))
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
    if raw.isascii() and raw.isdigit() and len(raw) <= MAX_NUMBER_DIGITS:
        return Search(number=int(raw))
    return Search(text=raw)
