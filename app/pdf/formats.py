"""How the printed documents write numbers, identifiers and dates (pt-BR, as the manuals show).

Every function takes the XML's text as it is and never raises: a value that does not parse is
printed as it came, so a damaged field is still visible instead of breaking the whole PDF.
"""

from __future__ import annotations

from datetime import date as Date
from decimal import Decimal, InvalidOperation, localcontext


def digits(text: str | None) -> str:
    return "".join(ch for ch in (text or "") if ch.isalnum()).upper()


def cnpj(text: str | None) -> str:
    """12.345.678/0001-90 (alphanumeric CNPJs keep their letters)."""
    raw = digits(text)
    if len(raw) != 14:
        return (text or "").strip()
    return f"{raw[:2]}.{raw[2:5]}.{raw[5:8]}/{raw[8:12]}-{raw[12:]}"


def cpf(text: str | None) -> str:
    raw = digits(text)
    if len(raw) != 11:
        return (text or "").strip()
    return f"{raw[:3]}.{raw[3:6]}.{raw[6:9]}-{raw[9:]}"


def tax_id(text: str | None) -> str:
    """A CNPJ or a CPF, told apart by length."""
    raw = digits(text)
    return cpf(raw) if len(raw) == 11 else cnpj(text)


def cep(text: str | None) -> str:
    raw = digits(text)
    return f"{raw[:5]}-{raw[5:]}" if len(raw) == 8 else (text or "").strip()


def phone(text: str | None) -> str:
    raw = digits(text)
    if len(raw) in (12, 13) and raw.startswith("55"):
        raw = raw[2:]  # the country code some issuers write
    if len(raw) in (10, 11):
        return f"({raw[:2]}) {raw[2:-4]}-{raw[-4:]}"
    if len(raw) in (8, 9):
        return f"{raw[:-4]}-{raw[-4:]}"
    return (text or "").strip()


def decimal(text: str | None, places: int = 2, *, blank: str = "") -> str:
    """1234.5 -> "1.234,50"; ``blank`` when the field is absent."""
    if text is None or not str(text).strip():
        return blank
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        return str(text).strip()
    if not value.is_finite():
        return str(text).strip()
    quantum = Decimal(1).scaleb(-places)
    try:
        with localcontext() as context:
            context.prec = max(28, len(value.as_tuple().digits) + places + 2)  # 60-digit values exist in the wild
            shown = f"{value.quantize(quantum):,.{places}f}"
    except InvalidOperation:
        return str(text).strip()
    return shown.replace(",", "\0").replace(".", ",").replace("\0", ".")


def money(text: str | None, *, blank: str = "0,00") -> str:
    return decimal(text, 2, blank=blank)


def quantity(text: str | None) -> str:
    """Quantities and unit values keep up to 4 places, as the XML allows, without trailing noise."""
    if text is None or not str(text).strip():
        return ""
    shown = decimal(text, 4)
    if "," in shown:
        whole, frac = shown.split(",")
        frac = frac.rstrip("0")
        frac = frac.ljust(2, "0")  # at least the cents
        return f"{whole},{frac}"
    return shown


def written(value: Date | None) -> str:
    """A date the documents readers read, back as the XML writes it (ISO 8601 in the document's
    own offset, which the functions below print); "" when absent."""
    return "" if value is None else value.isoformat()


def date(text: str | None) -> str:
    """ "2026-12-01T10:20:30-03:00" or "2026-12-01" -> "01/12/2026" (the issuer's local date)."""
    raw = (text or "").strip()
    if len(raw) >= 10 and raw[4] == "-" and raw[7] == "-":
        return f"{raw[8:10]}/{raw[5:7]}/{raw[:4]}"
    return raw


def time(text: str | None) -> str:
    """ "2026-12-01T10:20:30-03:00" -> "10:20:30" (as written, the issuer's local time)."""
    raw = (text or "").strip()
    if "T" in raw:
        return raw.split("T", 1)[1][:8]
    return raw if ":" in raw else ""


def date_time(text: str | None) -> str:
    shown_time = time(text)
    return f"{date(text)} {shown_time}".strip()


def key_groups(key: str) -> str:
    """The 44-character key in 11 groups of 4, as the DANFE prints it."""
    raw = digits(key)
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))
