"""Callbacks told of something on the thread that saw it: subscribe, unsubscribe, tell them all.

The capture's notices (app.desk) and the office database's changes (app.store.notify) are both
told this way: each callback in turn, on the caller's thread; one callback's failure is logged and
never keeps the others (or the capture that told them) from going on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Subscribers(Generic[T]):
    """A thread-safe list of callbacks of ``T``; ``failure``: the log's words when one fails."""

    def __init__(self, failure: str) -> None:
        self._failure = failure
        self._callbacks: list[Callable[[T], None]] = []
        self._lock = threading.Lock()

    def add(self, callback: Callable[[T], None]) -> Callable[[], None]:
        """``callback`` is told from now on; returns what removes it (idempotent)."""
        with self._lock:
            self._callbacks.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def tell(self, item: T) -> None:
        """Every callback in turn, on this thread."""
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(item)
            except Exception:  # one callback's bug never stops the others, nor the teller
                log.exception(self._failure)
