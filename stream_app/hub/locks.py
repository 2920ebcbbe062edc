"""One in-process lock per tenant: a hub's writers (and the Kafka fold agent) take the
tenant's lock for a whole write, so one tenant's writes happen one after the other in the
order they asked (asyncio locks are FIFO) while tenants proceed concurrently."""

from __future__ import annotations

import asyncio


class TenantLockTable:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, tenant: str) -> asyncio.Lock:
        lock = self._locks.get(tenant)
        if lock is None:
            lock = self._locks[tenant] = asyncio.Lock()
        return lock
