"""The engine's tests run on both engines: ``harness`` (and ``office_database`` where a test opens
its own product's harness) on a SQLite file and on a fresh PostgreSQL database."""

from __future__ import annotations

from tests.support.engines import harness_on_both_engines  # noqa: F401  (the fixture "harness")
