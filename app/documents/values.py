"""Field conversions for document metadata: money to centavos, dates with their offset, lenient
CNPJ/CPF checks and the strict access-key check.

Lenient means a bad value never loses the document: it is kept raw and a PT warning is returned.
The key is the exception: it identifies the document, so a bad key is a :class:`DocumentDataError`.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache

from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey
from app.documents.model import DocumentDataError

_MONEY = re.compile(r"([0-9]{1,15})(?:\.([0-9]{1,10}))?")
# dEmi-only documents (layout 2.00) carry no offset: Brasília's standard time is the best guess.
_BRASILIA_STANDARD = timezone(timedelta(hours=-3))


def to_cents(text: str) -> int | None:
    """``"3290.20"`` → 329020, exact (no float). None for empty text, for anything that is not a
    plain non-negative decimal, or for a value with non-zero digits below the centavo."""
    if not text:
        return None
    # The layouts' own form ("3290.20": 1-15 ASCII digits, a point, 2 digits) without the regular
    # expression: an NF-e of reform items reads a hundred values.
    if 4 <= len(text) <= 18 and text[-3] == "." and text.isascii():
        digits = text[:-3] + text[-2:]
        if digits.isdigit():
            return int(digits)
    match = _MONEY.fullmatch(text.strip())
    if match is None:
        return None
    whole, frac = match.groups()
    if frac is None:
        return int(whole) * 100
    if len(frac) > 2:
        if frac[2:].strip("0"):
            return None
        frac = frac[:2]
    return int(whole) * 100 + int(frac.ljust(2, "0"))


def cents_text(cents: int | None) -> str:
    """329020 → ``"3290.20"``: centavos back as the XML's decimal text (the PDFs print from it);
    "" for an absent value."""
    return "" if cents is None else f"{cents // 100}.{cents % 100:02d}"


def to_int(text: str) -> int | None:
    """ASCII digits only: ``str.isdigit`` also says yes to "²" (which ``int`` refuses) and to other
    scripts' digits (which no fiscal layout uses)."""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() else None


def to_datetime(text: str) -> tuple[datetime | None, bool]:
    """An aware datetime keeping the written offset, and whether the text was usable as written.

    A timestamp without offset is taken at -03:00 (flagged False); a bare date (dEmi) is 00:00 at
    -03:00 (flagged True: that layout had no time); unreadable text gives (None, False).
    """
    text = text.strip()
    if not text:
        return None, True
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), _BRASILIA_STANDARD), True
        value = datetime.fromisoformat(text)
    except ValueError:
        return None, False
    if value.utcoffset() is None:
        return value.replace(tzinfo=_BRASILIA_STANDARD), False
    return value, True


def dated(text: str, what: str, warnings: list[str]) -> datetime | None:
    """``to_datetime`` for a reader: an unreadable date or a missing offset becomes a warning
    naming ``what`` (the CT-e and NFS-e readers)."""
    value, as_written = to_datetime(text)
    if value is None and text:
        warnings.append(f"{what} ilegível: {text!r}.")
    elif not as_written:
        warnings.append(f"{what} sem fuso horário; lido como -03:00.")
    return value


def party_doc(cnpj: str, cpf: str, who: str, warnings: list[str]) -> str | None:
    """A party's CNPJ (else CPF) as written, upper case; a faulty one is kept with a warning."""
    doc = (cnpj or cpf).upper() or None
    if doc is not None:
        problem = tax_id_problem(doc)
        if problem is not None:
            warnings.append(f"{who}: {problem}")
    return doc


@lru_cache(maxsize=4096)
def tax_id_problem(doc: str) -> str | None:
    """None when ``doc`` is a valid CNPJ (14) or CPF (11), else a PT description of the fault.

    Cached: the same suppliers and carriers come back in document after document.
    """
    try:
        if len(doc) == 11 and doc.isdigit():
            Cpf(doc)
        else:
            Cnpj(doc)
    except InvalidIdentifier as exc:
        return exc.message
    return None


def _key_problem(key: str) -> str | None:
    try:
        AccessKey(key)
    except InvalidIdentifier as exc:
        return exc.message
    return None


def checked_key(key: str, what: str) -> str:
    """The access key, upper-cased; a :class:`DocumentDataError` naming ``what`` when invalid or missing."""
    key = key.strip().upper()
    if not key:
        raise DocumentDataError(f"{what} sem chave de acesso.")
    problem = _key_problem(key)
    if problem is not None:
        raise DocumentDataError(f"{what}: {problem}")
    return key
