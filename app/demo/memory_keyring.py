"""A keyring that keeps secrets in this process's memory: for the DEMO ONLY.

The demo's certificates are throwaway test material issued by the sandbox's test CA at every
start; they are worthless outside the simulated environment. Keeping their vault secrets in
memory lets the demo run on a machine without an OS keyring (a headless Linux box without
Secret Service) and leaves the user's real keyring untouched. Real certificates never go here:
:func:`use_memory_keyring` is called only by the demo, and the real app keeps the OS keyring.
"""

from __future__ import annotations

import threading

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """Secrets in a dict, lost when the process ends (demo certificates only)."""

    priority = 0.1  # never chosen by keyring's own discovery

    def __init__(self) -> None:
        # KeyringBackend.__init__ only reads KEYRING_PROPERTY_* variables, which mean nothing here.
        self._secrets: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def get_password(self, service: str, username: str) -> str | None:
        with self._lock:
            return self._secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        with self._lock:
            self._secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        with self._lock:
            if self._secrets.pop((service, username), None) is None:
                raise PasswordDeleteError(username)


class KeyringSwap:
    """Installs a :class:`MemoryKeyring` process-wide and puts the previous backend back."""

    def __init__(self) -> None:
        self._previous: KeyringBackend | None = None

    def install(self) -> MemoryKeyring:
        self._previous = keyring.get_keyring()
        ring = MemoryKeyring()
        keyring.set_keyring(ring)
        return ring

    def restore(self) -> None:
        if self._previous is not None:
            keyring.set_keyring(self._previous)
            self._previous = None
