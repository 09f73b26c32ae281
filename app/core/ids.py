"""CNPJ (numeric and the alphanumeric form in force since July 2026), CPF and their check digits.

The check digit rule is the mod-11 of the official documents: each character is worth
``ord(c) - 48`` (so '0'..'9' are 0..9 and 'A'..'Z' are 17..42, NT COCAD/SUARA/RFB 49/2024),
weights grow from the right. The same function serves the 44-character access keys and the
50-digit NFS-e key (app.core.keys); no library covers those, and the CNPJ libraries accept
lower case where the schemas accept only ``[0-9A-Z]``, so the rule is written once here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from operator import mul
from typing import Self

from app.core.errors import InvalidIdentifier

_CNPJ_BODY = re.compile(r"[0-9A-Z]{12}")
_CNPJ_FULL = re.compile(r"[0-9A-Z]{12}[0-9]{2}")
_CPF_FULL = re.compile(r"[0-9]{11}")
_MASK_CHARS = re.compile(r"[./\-\s]")


def char_value(c: str) -> int:
    """Value of one character in a check-digit sum: ASCII code minus 48."""
    return ord(c) - 48


@cache
def _weights(max_weight: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Weights 2..max_weight cycling from the right (enough for the 50-digit NFS-e key), and their
    running sums (to take away 48 per character: ``ord(c) - 48`` summed without a Python loop)."""
    weights = tuple(2 + i % (max_weight - 1) for i in range(64))
    return weights, tuple(accumulate(weights))


def mod11_digit(body: str, max_weight: int = 9) -> int:
    """Mod-11 check digit of ``body``: weights 2..max_weight from the right, cycling.

    ``dv = 11 - (sum mod 11)``, and a result above 9 (remainder 0 or 1) becomes 0. With
    ``max_weight=9`` this is the CNPJ and access-key rule; CPF uses weights that do not cycle
    (``max_weight`` at least the body's length + 1).
    """
    weights, sums = _weights(max_weight)
    codes = body.encode("ascii")[::-1]
    # Every key of every document passes here: the sum runs in C (map over bytes) rather than
    # in a Python loop, with the 48 of each character taken away at once.
    total = sum(map(mul, codes, weights)) - 48 * sums[len(codes) - 1] if codes else 0
    dv = 11 - total % 11
    return 0 if dv > 9 else dv


def _strip_mask(text: str) -> str:
    return _MASK_CHARS.sub("", text.strip()).upper()


def cnpj_check_digits(body12: str) -> str:
    """The two check digits of a 12-character CNPJ body (numeric or alphanumeric)."""
    body = body12.upper()
    if not _CNPJ_BODY.fullmatch(body):
        raise InvalidIdentifier(f"Raiz e ordem do CNPJ inválidas: {body12!r} (esperados 12 caracteres 0-9/A-Z).")
    dv1 = mod11_digit(body)
    dv2 = mod11_digit(body + str(dv1))
    return f"{dv1}{dv2}"


@dataclass(frozen=True, slots=True, order=True)
class Cnpj:
    """A valid CNPJ, always 14 upper-case characters without mask (``value``)."""

    value: str

    def __post_init__(self) -> None:
        if not _CNPJ_FULL.fullmatch(self.value):
            raise InvalidIdentifier(f"CNPJ inválido: {self.value!r}.")
        if self.value[:12] == "0" * 12 or len(set(self.value)) == 1:
            raise InvalidIdentifier(f"CNPJ inválido: {self.value!r}.")
        if cnpj_check_digits(self.value[:12]) != self.value[12:]:
            raise InvalidIdentifier(f"CNPJ com dígito verificador inválido: {self.formatted()}.")

    @classmethod
    def parse(cls, text: str) -> Self:
        """Accepts masked or plain, upper or lower case (``12.abc.345/01de-35``)."""
        return cls(_strip_mask(text))

    @classmethod
    def from_body(cls, body12: str) -> Self:
        body = body12.upper()
        return cls(body + cnpj_check_digits(body))

    @property
    def base(self) -> str:
        """The 8-character root shared by all establishments of the company."""
        return self.value[:8]

    @property
    def is_alphanumeric(self) -> bool:
        return not self.value.isdigit()

    def formatted(self) -> str:
        v = self.value
        return f"{v[:2]}.{v[2:5]}.{v[5:8]}/{v[8:12]}-{v[12:]}"

    def __str__(self) -> str:
        return self.value


def cpf_check_digits(body9: str) -> str:
    if not re.fullmatch(r"[0-9]{9}", body9):
        raise InvalidIdentifier(f"Base do CPF inválida: {body9!r}.")
    dv1 = mod11_digit(body9, max_weight=10)
    dv2 = mod11_digit(body9 + str(dv1), max_weight=11)
    return f"{dv1}{dv2}"


@dataclass(frozen=True, slots=True, order=True)
class Cpf:
    """A valid CPF, 11 digits without mask."""

    value: str

    def __post_init__(self) -> None:
        if not _CPF_FULL.fullmatch(self.value) or len(set(self.value)) == 1:
            raise InvalidIdentifier(f"CPF inválido: {self.value!r}.")
        if cpf_check_digits(self.value[:9]) != self.value[9:]:
            raise InvalidIdentifier(f"CPF com dígito verificador inválido: {self.formatted()}.")

    @classmethod
    def parse(cls, text: str) -> Self:
        return cls(_strip_mask(text))

    def formatted(self) -> str:
        v = self.value
        return f"{v[:3]}.{v[3:6]}.{v[6:9]}-{v[9:]}"

    def __str__(self) -> str:
        return self.value


def parse_taxpayer(text: str) -> Cnpj | Cpf:
    """A CNPJ (14 characters) or a CPF (11 digits), masked or not."""
    plain = _strip_mask(text)
    if len(plain) == 11:
        return Cpf(plain)
    return Cnpj(plain)
