"""Window tests reuse the desk's data folder, filled by real capture from the sandbox."""

from __future__ import annotations

from tests.desk.conftest import desk, office

__all__ = ["desk", "office"]
