"""Storage: SQLAlchemy models, Alembic migrations and small repositories over SQLite.

The only package that imports sqlalchemy or alembic. Open with ``app.store.db.open_database(path)``;
use the repositories (``CompanyRepository(db)``, ``DocumentRepository(db)``...), which take short
sessions per call and return frozen dataclasses from ``app.store.records``.

Nothing is imported here: ``app.store.records`` (plain values the window shows) must not pull
SQLAlchemy and Alembic into the start-up of the window.
"""
