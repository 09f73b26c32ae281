"""Never two queries for one CNPJ at once, whatever the product or the job asking."""

from __future__ import annotations

import threading


class CompanyLocks:
    """One lock per CNPJ within this process (the data folder's service lock keeps a second
    process out). Shared by every product's distribution and point queries: the CT-e and NF-e of
    one company are different services, but a single lock per CNPJ is what the rule book asks of
    each and costs nothing."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def for_cnpj(self, cnpj: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(cnpj, threading.Lock())
