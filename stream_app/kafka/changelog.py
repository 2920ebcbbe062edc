"""Writing the tenant state's changelog and waiting for it (the Kafka hub's durable commit).

:meth:`Changelog.write` queues a transaction's records on the tenant's changelog partition
(:class:`stream_app.kafka.state.KafkaTenantState`); :meth:`Changelog.settle` waits for the
brokers' acknowledgements, then seals the transaction. If that fails, the tenant's memory (now
ahead of the changelog) is dropped and rebuilt from the table on next use, and the records the
changelog missed are sent again from the table.

Sealing: the tenant's commit marker is sent again once its transaction is acknowledged, so the
transaction never sits in the partition's last record batch. Recovery reads a changelog
partition up to its high watermark, and tansu 0.6.0 reports that as the last batch's base
offset + 1, hiding the rest of that batch (docs/kafka.md). A broker that reports it right keeps
one duplicate marker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, cast

import structlog

from stream_app.kafka.metrics import WorkerMetrics
from stream_app.kafka.state import KafkaTenantState
from topologies.memory import ChangeSet

log = structlog.get_logger(__name__)


class Changelog:
    def __init__(
        self,
        state: KafkaTenantState,
        metrics: WorkerMetrics,
        follow: Callable[[Iterable[ChangeSet]], None],
    ) -> None:
        self.state = state
        self.metrics = metrics
        self.follow = follow  # the read path's indexes follow every write
        self._background: set[asyncio.Future[Any]] = set()

    def write(self, changes: Sequence[ChangeSet]) -> int:
        """Queue ChangeSets on the changelog (see :meth:`settle`); returns the records sent."""
        records = self.state.write(changes)
        self.metrics.state_records.inc(records)
        self.follow(changes)
        return records

    def hard_delete(self, changes: ChangeSet) -> int:
        """A privacy write: the ChangeSet, then tombstones for what it deleted, at once."""
        records, tombstones = self.state.hard_delete(changes)
        self.metrics.state_records.inc(records + tombstones)
        self.follow([changes])
        log.info(
            "privacy_changes_written", tenant=changes.tenant, records=records, tombstones=tombstones
        )
        return records + tombstones

    async def hand_over(self, tenant: str) -> None:
        """Return once the records written so far are in the Kafka producer, which Faust
        flushes before it commits offsets (a fold's, whose offset is acknowledged next).
        Raises if records of the tenant failed since its last reload: the caller reloads."""
        await self.state.handed_over(tenant)

    async def room(self) -> None:
        """Wait while the changelog's queue is above its high-water mark (a writer that
        does not wait for its records, such as recall history, calls this first)."""
        await self.state.room()

    async def settle(self, tenant: str) -> None:
        """Wait for the changelog sends of the tenant's last write, then seal it. If that
        fails, the memory (ahead of the changelog) is reloaded. The caller holds the tenant's
        lock."""
        try:
            await self._flush()
            sent = self.state.reseal(tenant)
            if sent is not None:
                await sent
        except BaseException:
            self.reload(tenant)
            raise

    def reload(self, tenant: str) -> None:
        """Drop the tenant's memory: it is rebuilt from the table on next use, and the records
        the changelog missed are sent again (``KafkaTenantState.resync``)."""
        log.warning("tenant_reloaded", tenant=tenant)
        self.state.resync(tenant)
        self.state.mark_stale()

    async def _flush(self) -> None:
        pending = self.state.take_pending()
        if pending:
            await asyncio.gather(*cast(list[Awaitable[Any]], pending))

    def flush_soon(self) -> None:
        """Await the pending changelog sends in the background (synchronous writers)."""
        pending = self.state.take_pending()
        if not pending:
            return
        future = asyncio.ensure_future(asyncio.gather(*cast(list[Awaitable[Any]], pending)))
        self._background.add(future)
        future.add_done_callback(self._flushed)

    def _flushed(self, future: asyncio.Future[Any]) -> None:
        self._background.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.error("changelog_send_failed", error=str(future.exception()))
