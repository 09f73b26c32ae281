"""The declarative base and what every table shares: the naming convention, the product CHECK,
the column lengths, the company foreign key.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    ForeignKey,
    MetaData,
    Text,
)
from sqlalchemy.orm import DeclarativeBase

from app.store.types import UtcDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

PRODUCTS_CHECK = "product IN ('nfe', 'cte', 'nfse')"
NULLABLE_PRODUCT_CHECK = "product IS NULL OR product IN ('nfe', 'cte', 'nfse')"

KEY_LEN = 50  # 44 for NF-e/CT-e, 50 for NFS-e
ID_LEN = 14  # CNPJ (14) or CPF (11)
CSTAT_LEN = 10  # '138', or an ADN code such as 'E2220'


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime, str: Text}  # noqa: RUF012 (SQLAlchemy's hook)


def company_fk(ondelete: str = "CASCADE") -> ForeignKey:
    return ForeignKey("companies.id", ondelete=ondelete)
