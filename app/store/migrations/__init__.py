"""Alembic migration scripts, run in code by app.store.db (no alembic.ini)."""
