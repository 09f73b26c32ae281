"""The NF-e keys carried by each CT-e (table ``cte_carried_nfe``): written with the CT-e's lot,
read from either side (the NF-e a CT-e moved, the CT-e that moved an NF-e)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import text

from app.store.db import Database

_LINK = "INSERT INTO cte_carried_nfe (company_id, cte_key, nfe_key) VALUES (?, ?, ?)"
_KNOWN = "SELECT nfe_key FROM cte_carried_nfe WHERE company_id = ? AND cte_key = ?"
_NFE_OF = text("SELECT nfe_key FROM cte_carried_nfe WHERE company_id = :company AND cte_key = :key ORDER BY nfe_key")
_CTE_OF = text("SELECT cte_key FROM cte_carried_nfe WHERE company_id = :company AND nfe_key = :key ORDER BY cte_key")


def link_carried_in(driver: Any, company_id: int, cte_key: str, nfe_keys: Iterable[str]) -> int:
    """Record the NF-e keys ``cte_key`` carries (a CT-e stored again adds nothing); on the unit's
    sqlite3 driver, inside its transaction. Returns how many links are new."""
    wanted = list(dict.fromkeys(nfe_keys))
    if not wanted:
        return 0
    known = {row[0] for row in driver.execute(_KNOWN, (company_id, cte_key)).fetchall()}
    rows = [(company_id, cte_key, key) for key in wanted if key not in known]
    if rows:
        driver.executemany(_LINK, rows)
    return len(rows)


class CarriedNfeRepository:
    """Reads of the CT-e ↔ NF-e links of one data folder."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def nfe_keys_of(self, company_id: int, cte_key: str) -> list[str]:
        """The NF-e keys the CT-e ``cte_key`` carries."""
        return self._keys(_NFE_OF, company_id, cte_key)

    def cte_keys_of(self, company_id: int, nfe_key: str) -> list[str]:
        """The CT-e keys that carried the NF-e ``nfe_key``."""
        return self._keys(_CTE_OF, company_id, nfe_key)

    def _keys(self, sql: Any, company_id: int, key: str) -> list[str]:
        with self._db.read_connection() as connection:
            return [row[0] for row in connection.execute(sql, {"company": company_id, "key": key})]
