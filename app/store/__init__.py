"""Storage: SQLAlchemy models, Alembic migrations and small repositories over SQLite.

The only package that imports sqlalchemy or alembic. Open with ``open_database(path)``; use the
repositories (``CompanyRepository(db)``, ``DocumentRepository(db)``...), which take short
sessions per call and return frozen dataclasses from ``app.store.records``.
"""

from app.store.db import Database, open_database
from app.store.errors import InvalidRecord, StorageBug, StorageCorrupt, StorageUnavailable

__all__ = [
    "Database",
    "InvalidRecord",
    "StorageBug",
    "StorageCorrupt",
    "StorageUnavailable",
    "open_database",
]
