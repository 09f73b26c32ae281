"""The three document families the app captures and the two fiscal environments."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Product(StrEnum):
    """Document family; cadence, quotas and timeouts are set per product."""

    NFE = "nfe"
    CTE = "cte"
    NFSE = "nfse"

    @property
    def label(self) -> str:
        return {"nfe": "NF-e", "cte": "CT-e", "nfse": "NFS-e"}[self.value]


class Environment(IntEnum):
    """Fiscal environment; the value is ``tpAmb`` (1 produção, 2 homologação / produção restrita)."""

    PRODUCAO = 1
    HOMOLOGACAO = 2

    @property
    def key(self) -> str:
        """Key in settings.json and in the database."""
        return "producao" if self is Environment.PRODUCAO else "homologacao"

    @property
    def label(self) -> str:
        return "Produção" if self is Environment.PRODUCAO else "Homologação / Produção restrita"

    @classmethod
    def from_key(cls, key: str) -> Environment:
        for environment in cls:
            if environment.key == key:
                return environment
        raise ValueError(key)
