"""NSU: the per-interested-party sequence number of the national distribution services."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Self

from app.core.errors import InvalidIdentifier

NSU_DIGITS = 15
NSU_MAX = 10**NSU_DIGITS - 1
_NSU_TEXT = re.compile(r"[0-9]{1,15}")


@dataclass(frozen=True, slots=True, order=True)
class Nsu:
    """A 15-digit NSU; ``str()`` gives the zero-padded form the schemas demand (``TNSU``)."""

    value: int

    def __post_init__(self) -> None:
        if not 0 <= self.value <= NSU_MAX:
            raise InvalidIdentifier(f"NSU fora do intervalo de 15 dígitos: {self.value}.")

    @classmethod
    def parse(cls, text: str | int) -> Self:
        if isinstance(text, int):
            return cls(text)
        stripped = text.strip()
        if not _NSU_TEXT.fullmatch(stripped):
            raise InvalidIdentifier(f"NSU inválido: {text!r}.")
        return cls(int(stripped))

    def __str__(self) -> str:
        return f"{self.value:0{NSU_DIGITS}d}"

    def next(self) -> Nsu:
        return Nsu(self.value + 1)


ZERO = Nsu(0)


def missing_nsus(received: Iterable[int], first: int, last: int) -> Iterator[int]:
    """The NSUs in ``first..last`` (inclusive) absent from ``received``, in order."""
    have = {n for n in received if first <= n <= last}
    return (n for n in range(first, last + 1) if n not in have)
