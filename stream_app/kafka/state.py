"""Tenant state of the Kafka deployment, kept in a Faust table and recovered from its changelog.

Design (docs/kafka.md, "State and recovery"):

- The engine's :class:`ChangeSet` names exactly what a transaction changed. Each changed item
  is written to the Faust table ``<app id>-state`` under ``tenant/kind/item`` (see
  :mod:`stream_app.kafka.codec`). Writes go explicitly to the changelog partition that owns
  the tenant: the partition of the tenant's events (key = tenant, same partition count), so
  the tenant's whole state moves with its events partition on a rebalance.
- Each ChangeSet is one transaction with a per-tenant sequence number; its item records carry
  the sequence and the payload they replace; the tenant's commit marker (kind ``c``) is written
  last. aiokafka keeps the order of one partition's messages, so a marker on the changelog
  means every record before it is there too. On recovery, records newer than the marker
  (a crash while the transaction was in flight) are rolled back to their previous payload,
  and the repair is written before the tenant's next transaction.
- A :class:`TenantMemory` is rebuilt from the table (``TenantMemory.load``) on first use after
  an assignment: one scan of the table groups the records by tenant.
- Deleted items are first written as deletion records (so they can be rolled back), then
  replaced by a tombstone at the tenant's next transaction (compaction drops them). A privacy
  delete cannot wait for that: :meth:`KafkaTenantState.hard_delete` tombstones at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Protocol

import structlog

from stream_app.kafka.codec import (
    COMMIT,
    Record,
    build_memory,
    changeset_items,
    decode_seq,
    encode_seq,
    split_key,
    table_key,
)
from stream_app.kafka.sender import ChangelogSender
from topologies.config import AnnConfig
from topologies.memory import ChangeSet, TenantMemory

log = structlog.get_logger(__name__)


class ChangelogWriter(Protocol):
    """What the state needs from a Faust table (tests use a dict-backed fake)."""

    @property
    def data(self) -> MutableMapping[bytes, bytes]: ...

    def send_changelog(self, partition: int | None, key: Any, value: Any) -> Any: ...


class KafkaTenantState:
    """Every tenant of the partitions this worker owns, backed by a changelogged table."""

    def __init__(
        self,
        table: ChangelogWriter,
        dim: int,
        partition_of: Callable[[str], int],
        owns: Callable[[int], bool] = lambda _p: True,
        ann: AnnConfig | None = None,
    ) -> None:
        self.table = table
        self.dim = dim
        self.ann = ann
        self.partition_of = partition_of
        self.owns = owns
        self._memories: dict[str, TenantMemory] = {}
        self._seq: dict[str, int] = {}
        self._repairs: dict[str, list[tuple[bytes, bytes | None]]] = {}
        self._tombstones: dict[str, list[bytes]] = defaultdict(list)
        self._loaded = False
        self.rolled_back = 0  # records of half-written transactions undone on recovery
        self.pending: list[Awaitable[Any]] = []  # changelog sends of the last write()

    # ------------------------------------------------------------------ loading
    def invalidate(self) -> None:
        """Forget every memory (partitions were revoked or assigned): reload on next use."""
        self._memories.clear()
        self._seq.clear()
        self._repairs.clear()
        self._tombstones.clear()
        self._loaded = False

    def mark_stale(self) -> None:
        """Partitions were assigned: load their tenants (after recovery) on next use."""
        self._loaded = False

    def tenants_in(self, partitions: set[int]) -> list[str]:
        return [t for t in self._memories if self.partition_of(t) in partitions]

    def _load_all(self) -> None:
        markers: dict[str, int] = {}
        groups: dict[str, list[tuple[bytes, str, str, Record]]] = defaultdict(list)
        for key, raw in list(self.table.data.items()):
            if raw is None:
                continue
            tenant, kind, item = split_key(key)
            if tenant in self._memories or not self.owns(self.partition_of(tenant)):
                continue
            if kind == COMMIT:
                markers[tenant] = decode_seq(raw)
            else:
                groups[tenant].append((key, kind, item, Record.decode(raw)))
        for tenant in set(groups) | set(markers):
            committed = markers.get(tenant, 0)
            live: dict[tuple[str, str], bytes] = {}
            repairs: list[tuple[bytes, bytes | None]] = []
            for key, kind, item, record in groups.get(tenant, []):
                payload = record.new if record.seq <= committed else record.prev
                if record.seq > committed:
                    repairs.append((key, payload))
                elif record.new is None:
                    self._tombstones[tenant].append(key)
                if payload is not None:
                    live[(kind, item)] = payload
            self._memories[tenant] = build_memory(tenant, self.dim, live, self.ann)
            self._seq[tenant] = committed
            if repairs:
                self._repairs[tenant] = repairs
                self.rolled_back += len(repairs)
                log.warning(
                    "state_rollback", tenant=tenant, records=len(repairs), committed_seq=committed
                )
        self._loaded = True
        log.info("state_loaded", tenants=len(self._memories))

    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._load_all()

    def tenants(self) -> list[str]:
        self.ensure_loaded()
        return sorted(self._memories)

    def __len__(self) -> int:
        return len(self._memories)

    def get(self, tenant: str) -> TenantMemory | None:
        self.ensure_loaded()
        return self._memories.get(tenant)

    def memory(self, tenant: str) -> TenantMemory:
        """The tenant's memory, created empty if it has none."""
        self.ensure_loaded()
        memory = self._memories.get(tenant)
        if memory is None:
            memory = self._memories[tenant] = TenantMemory(tenant, self.dim, self.ann)
            self._seq[tenant] = 0
        return memory

    def forget(self, tenant: str) -> None:
        """Drop a tenant whose partition moved away (its records stay in the table)."""
        self._drop_memory(tenant)
        if isinstance(self.table, ChangelogSender):
            self.table.discard(tenant)  # the next owner recovers it from the changelog

    def resync(self, tenant: str) -> None:
        """A changelog write of the tenant failed: drop its memory (rebuilt from the table on
        next use) and, while this worker owns it, send the records the changelog missed again
        (the table's values: see :meth:`ChangelogSender.resend`)."""
        if not self.owns(self.partition_of(tenant)):
            self.forget(tenant)
            return
        self._drop_memory(tenant)
        if isinstance(self.table, ChangelogSender):
            self.table.resend(tenant)

    def _drop_memory(self, tenant: str) -> None:
        self._memories.pop(tenant, None)
        self._seq.pop(tenant, None)
        self._repairs.pop(tenant, None)
        self._tombstones.pop(tenant, None)

    # ------------------------------------------------------------------ writing
    def _put(self, partition: int, key: bytes, value: bytes | None) -> None:
        if value is None:
            self.table.data.pop(key, None)
        else:
            self.table.data[key] = value
        fut = self.table.send_changelog(partition, key, value)
        if fut is not None:
            self.pending.append(fut)

    def write(self, changes: Iterable[ChangeSet]) -> int:
        """Write ChangeSets, one transaction each; returns how many records were sent.

        Synchronous on purpose: no other task runs between the first record and the marker,
        so a transaction's records are queued together, in order, on one partition.
        """
        sent = 0
        self.pending = []  # the futures of this call only (see flush in the worker)
        for change in changes:
            if change.empty:
                continue
            tenant = change.tenant
            partition = self.partition_of(tenant)
            seq = self._seq.get(tenant, 0)
            for key, payload in self._repairs.pop(tenant, []):
                self._put(
                    partition,
                    key,
                    None if payload is None else Record(seq, payload, payload).encode(),
                )
                sent += 1
            for key in self._tombstones.pop(tenant, []):
                self._put(partition, key, None)
                sent += 1
            seq += 1
            for kind, item, payload in changeset_items(change):
                key = table_key(tenant, kind, item)
                old = self.table.data.get(key)
                prev = None if old is None else Record.decode(old).new
                if payload is None and prev is None:
                    continue
                self._put(partition, key, Record(seq, prev, payload).encode())
                if payload is None:
                    self._tombstones[tenant].append(key)
                sent += 1
            self._put(partition, table_key(tenant, COMMIT, ""), encode_seq(seq))
            self._seq[tenant] = seq
            sent += 1
        return sent

    def hard_delete(self, changes: ChangeSet) -> tuple[int, int]:
        """Write a privacy ChangeSet (records, then the commit marker) and, the marker being
        queued, replace every deletion record of the tenant with a real tombstone (``value =
        None``) at once: recovery keeps the last value per key, so a recovered worker never
        sees the deleted items. Returns (records, tombstones) sent."""
        sent = self.write([changes])
        tenant = changes.tenant
        partition = self.partition_of(tenant)
        tombstones = self._tombstones.pop(tenant, [])
        for key in tombstones:
            self._put(partition, key, None)
        return sent, len(tombstones)

    def reseal(self, tenant: str) -> Awaitable[Any] | None:
        """Send the tenant's commit marker again (see ``Changelog.settle``); the send, if any."""
        key = table_key(tenant, COMMIT, "")
        marker = self.table.data.get(key)
        if marker is None:
            return None
        sent: Awaitable[Any] | None = self.table.send_changelog(
            self.partition_of(tenant), key, marker
        )
        return sent

    async def handed_over(self, tenant: str) -> None:
        """Return once every record written so far is in the Kafka producer: a
        :class:`ChangelogSender` queues them (a table that sends at once has nothing to wait
        for). A writer whose offsets are acknowledged next awaits this first; it raises if
        records of ``tenant`` failed since its last reload."""
        if isinstance(self.table, ChangelogSender):
            await self.table.hand_over(tenant)

    async def room(self) -> None:
        """Wait until the sender's queue is below its high-water mark (writers that never
        wait for their records call this before writing)."""
        if isinstance(self.table, ChangelogSender):
            await self.table.room()

    def take_pending(self) -> list[Awaitable[Any]]:
        pending, self.pending = self.pending, []
        return pending
