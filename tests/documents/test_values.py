"""Money to centavos (exact), dates with their offset, lenient tax ids, strict keys."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.documents import DocumentDataError
from app.documents.values import checked_key, tax_id_problem, to_cents, to_datetime, to_int


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("3290.20", 329020),
        ("0.01", 1),
        ("0.1", 10),
        ("5000", 500000),
        ("12.000", 1200),
        ("9999999999999.99", 999999999999999),
        (" 1.50 ", 150),
        ("", None),
        ("12,50", None),
        ("-1.00", None),
        ("1.005", None),
        ("1e3", None),
        ("abc", None),
        ("1.5", 150),  # the regular expression's path beside the layout's two-digit one
        ("１２.34", None),  # digits Python's isdigit() takes but the layouts do not
        ("12.3４", None),
        ("1234567890123456.00", None),  # 16 integer digits: beyond the layouts' 15
        (".50", None),
        ("7.", None),
    ],
)
def test_to_cents(text: str, cents: int | None) -> None:
    assert to_cents(text) == cents


def test_to_cents_is_exact_where_float_is_not() -> None:
    assert to_cents("0.29") == 29 and int(float("0.29") * 100) == 28  # float would lose a centavo
    assert to_cents("4503599627370.95") == 450359962737095


def test_to_datetime_keeps_the_written_offset() -> None:
    value, ok = to_datetime("2017-03-22T09:00:37-04:00")
    assert ok and value is not None and value.utcoffset() == timedelta(hours=-4)
    value, ok = to_datetime("2025-07-01T10:00:01Z")
    assert ok and value is not None and value.utcoffset() == timedelta(0)


def test_to_datetime_tolerates_and_flags() -> None:
    value, ok = to_datetime("2017-03-17T14:52:25")
    assert not ok and value is not None and value.utcoffset() == timedelta(hours=-3)
    value, ok = to_datetime("2010-05-04")  # dEmi of layout 2.00: legitimately date-only
    assert ok and value is not None and value.isoformat() == "2010-05-04T00:00:00-03:00"
    assert to_datetime("ontem") == (None, False)
    assert to_datetime("") == (None, True)


def test_to_int() -> None:
    assert (to_int(" 12 "), to_int(""), to_int("1a")) == (12, None, None)
    # A corrupt document's "1²" or other scripts' digits are unreadable, never a crash or a number.
    assert (to_int("1\u00b2"), to_int("\u0661\u0662"), to_int("\uff11")) == (None, None, None)


def test_tax_id_problem() -> None:
    assert tax_id_problem("11222333000181") is None
    assert tax_id_problem("12ABC34501DE35") is None
    assert tax_id_problem("52998224725") is None
    assert "dígito" in (tax_id_problem("11222333000182") or "")
    assert tax_id_problem("123") is not None


def test_checked_key() -> None:
    key = "35170307705364000116550010000158771254375877"
    assert checked_key(f" {key} ", "NF-e") == key
    with pytest.raises(DocumentDataError, match=r"^NF-e: Chave de acesso com dígito"):
        checked_key(key[:-1] + "8", "NF-e")
    with pytest.raises(DocumentDataError, match="sem chave"):
        checked_key("", "NF-e")
