"""Document rows written straight into ``documents`` for grid tests: an NF-e summary (resNFe) of
one company, received, with a real access key numbered ``number``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.keys import AccessKey

STORED_AT = datetime(2026, 6, 1, tzinfo=UTC)


def access_key(number: int) -> str:
    return AccessKey.build(
        uf="SP", year_month="2603", issuer="11222333000181", model="55", serie=1, number=number, tp_emis=1, code=number
    ).value


def summary_row(company_id: int, number: int, issued_at: datetime | None, **columns: Any) -> dict[str, Any]:
    """The row of document ``number`` (also its id), ``columns`` added or replaced."""
    return {
        "id": number,
        "company_id": company_id,
        "product": "nfe",
        "kind": "resNFe",
        "access_key": access_key(number),
        "issued_at": issued_at,
        "direction": "received",
        "status": "summary",
        "quarantined": False,
        "version_count": 1,
        "created_at": STORED_AT,
        "updated_at": STORED_AT,
        **columns,
    }
