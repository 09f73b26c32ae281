"""Never two queries for one CNPJ at once to one service, whatever the job asking."""

from __future__ import annotations

import threading


class CompanyLocks:
    """One lock per CNPJ within this process (the data folder's service lock keeps a second
    process out), shared by one product's distribution and point queries. Each product has its
    own: NF-e and CT-e are different services, each judging only its own queries."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def for_cnpj(self, cnpj: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(cnpj, threading.Lock())
