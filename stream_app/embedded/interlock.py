"""Cross-process write locks over one data dir: one writer per tenant at a time, in turn.

Several processes may write one store (``foldmem run`` beside ``foldmem ingest``, ``foldmem
serve`` answering ``POST /events``, ``foldmem intent resolve``). Each write reads the tenant,
plans and commits; the store's version check refuses a commit based on a stale read
(:class:`~stream_app.embedded.store.StaleTenantError`), but retrying that optimistically starves the
slower process: a runner commits twice per event while the other reloads the tenant. So the
writers take turns instead: :meth:`TenantLocks.hold` takes the tenant's lock file under
``DATA_DIR/locks/`` (``flock``: released by the kernel if the process dies) for the whole
read-plan-commit.

Taking turns: a writer first takes the tenant's *gate*, then the lock, then lets the gate go.
A writer that just released the lock and wants it again must pass the gate, which the next
waiter holds while it waits for the lock: so waiting processes alternate with a busy one
instead of losing every race to it.

A writer that cannot get the lock within ``timeout_s`` gets :class:`TenantBusyError`, a
transient error: the runner and ``foldmem ingest`` try again later, HTTP ingest answers 503
with ``Retry-After``; none of them dead-letters the event.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import structlog

from stream_app.embedded.store import TransientStoreError

log = structlog.get_logger(__name__)

_FIRST_POLL_S = 0.002
_MAX_POLL_S = 0.02


class TenantBusyError(TransientStoreError):
    """Another process kept the tenant's write lock longer than the wait allows."""


class TenantLocks:
    """Per-tenant lock files under ``folder`` (opened per use: a runner with thousands of
    tenants keeps no descriptors open)."""

    def __init__(self, folder: Path, timeout_s: float = 60.0) -> None:
        self.folder = Path(folder)
        self.timeout_s = timeout_s

    @contextlib.contextmanager
    def _open(self, name: str, part: str) -> Iterator[int]:
        self.folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(name.encode()).hexdigest()[:32]
        fd = os.open(self.folder / f"{digest}.{part}", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            yield fd
        finally:
            os.close(fd)  # releases a lock held through it

    @contextlib.asynccontextmanager
    async def hold(self, tenant: str) -> AsyncIterator[None]:
        """The tenant's write lock for the body of the ``async with`` (not re-entrant: the
        caller also holds the tenant's in-process lock)."""
        deadline = time.monotonic() + self.timeout_s
        with self._open(tenant, "lock") as lock:
            with self._open(tenant, "gate") as gate:
                await self._take(gate, tenant, deadline)
                await self._take(lock, tenant, deadline)
            yield  # the gate is open again for the next waiter

    async def _take(self, fd: int, tenant: str, deadline: float) -> None:
        poll = _FIRST_POLL_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TenantBusyError(
                        f"tenant {tenant!r} is being written by another process for more "
                        f"than {self.timeout_s:g}s (FOLDMEM_WRITE_LOCK_TIMEOUT_S); try again"
                    ) from None
                await asyncio.sleep(poll)
                poll = min(poll * 2, _MAX_POLL_S)

    @contextlib.contextmanager
    def try_hold(self, name: str) -> Iterator[bool]:
        """A lock by name without waiting: yields False when another process holds it."""
        with self._open(name, "lock") as fd:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
