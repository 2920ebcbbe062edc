"""One batch ahead per tenant: the work started for a tenant's next batch while this one folds
(its texts embedded, its texts read), handed over once when that batch starts.

A newer start for the same tenant replaces the older (its future cancelled: if it has not run
yet, its batch is not the next one any more). Safe across threads: a fold step that starts the
work may run in a worker thread while the event loop takes another tenant's.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class AheadSlots(Generic[T]):
    """Per key (a tenant), the future of the work started for its next batch."""

    def __init__(self) -> None:
        self._slots: dict[str, Future[T]] = {}
        self._lock = threading.Lock()

    def put(self, key: str, future: Future[T] | None) -> None:
        """The key's work from now (None: none), the one it replaces cancelled."""
        with self._lock:
            replaced = self._slots.pop(key, None)
            if future is not None:
                self._slots[key] = future
        if replaced is not None:
            replaced.cancel()

    def take(self, key: str) -> Future[T] | None:
        """The key's work, handed over once (None: none started)."""
        with self._lock:
            return self._slots.pop(key, None)

    def clear(self) -> None:
        """Drop every key's work (after a deletion), each cancelled."""
        with self._lock:
            dropped, self._slots = self._slots, {}
        for future in dropped.values():
            future.cancel()
