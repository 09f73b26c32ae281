"""The benchmarks' keyring stand-in, so that every benchmark runs with the venv alone.

A benchmark registers companies with throwaway certificates from the sandbox's test CA; the vault
keeps their data keys in a keyring, and a machine without an OS keyring (a headless Linux box
without Secret Service, a fresh CI runner) has none: "Não há um cofre de senhas seguro". Like the
demo (``app.demo.memory_keyring``, reused here), a benchmark run as a script keeps those secrets
in its own memory and never touches the user's keyring. Only the benchmarks' ``__main__`` blocks
call this; the tests have their own (``tests/conftest.py``) and the app never does.
"""

from __future__ import annotations

import keyring

from app.demo.memory_keyring import KeyringSwap, MemoryKeyring


def use_memory_keyring() -> MemoryKeyring:
    """Install a process-wide in-memory keyring for the rest of this benchmark process."""
    return KeyringSwap().install()


def memory_keyring() -> MemoryKeyring:
    """The in-memory keyring :func:`use_memory_keyring` installed (to hand it a child's secrets)."""
    ring = keyring.get_keyring()
    assert isinstance(ring, MemoryKeyring), "use_memory_keyring() first"
    return ring
