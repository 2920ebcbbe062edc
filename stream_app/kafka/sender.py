"""The state table's changelog records, handed to the Kafka producer in the order the state
wrote them (:class:`ChangelogSender`).

Why not Faust's own path (``Table.send_changelog``): it queues every record in Faust's producer
buffer, which a task drains one record per turn, and whoever waits for that buffer (the stream
conductor once it holds 100 records, the offset commit every second) waits record by record.
A fold writes about 50 records, so that path cost more CPU than the changelog's encoding
(docs/kafka.md, "Where a worker's time goes"). Here a write only queues the records; one drain
task hands them to the producer (``producer.send``: aiokafka's record batches, acknowledged per
batch), in write order, so a transaction's records still reach its partition before its commit
marker. Faust flushes that producer before it commits offsets; a writer whose offsets follow
its records awaits :meth:`ChangelogSender.hand_over` first.

Durability: a record the producer refuses (or a drain interrupted, or the worker stopping)
fails it and every record queued after it, and marks their tenants: every later
:meth:`~ChangelogSender.hand_over` for such a tenant raises that first failure, so no writer
acknowledges an offset past a transaction that never reached the changelog. The table already
holds those records (the memory was built from them), so the tenant's reload sends its failed
keys again with the table's values (:meth:`~ChangelogSender.resend`): the changelog then says
what the table and the memory say. Only the drain task sends: a cancelled writer leaves the
queue whole. Writers that never wait for their records (recall history) wait for
:meth:`~ChangelogSender.room` below a high-water mark.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from schemas.errors import FoldmemError
from stream_app.kafka.codec import SEP

log = structlog.get_logger(__name__)

Queued = tuple[int | None, bytes, bytes | None, "asyncio.Future[Any]"]

HIGH_WATER = 10_000  # queued records above which writers wait (about 200 folds' worth)


class ChangelogSendError(FoldmemError):
    """Changelog records of a tenant did not reach the producer: its memory is ahead of the
    changelog until it is reloaded."""


@dataclass
class Failure:
    """A tenant's records that did not reach the changelog since its last reload."""

    error: BaseException  # the first one: what its writers are told
    partition: int | None
    keys: list[bytes] = field(default_factory=list)  # in the order they were written

    def to_resend(self) -> list[bytes]:
        """Each key once, at its last place: a transaction's records stay before its marker."""
        return list(dict.fromkeys(reversed(self.keys)))[::-1]


class RecordProducer(Protocol):
    """What the sender needs from Faust's producer (its aiokafka driver)."""

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: float | None,
        headers: Any,
    ) -> Awaitable[Any]: ...


class ChangelogSender:
    """The changelog of a state table: ``data`` is the table's store, ``send_changelog``
    queues a record and returns the future of its acknowledgement."""

    def __init__(
        self,
        table: Any,
        topic: str,
        producer: Callable[[], RecordProducer],
        high_water: int = HIGH_WATER,
    ) -> None:
        self.table = table
        self.topic = topic
        self.producer = producer  # Faust's producer, created when the app starts
        self.high_water = high_water
        self._queue: deque[Queued] = deque()
        self._drain: asyncio.Task[None] | None = None
        self._failed: dict[str, Failure] = {}  # by tenant, until it is reloaded
        self._stopped = False

    @property
    def data(self) -> MutableMapping[bytes, bytes]:
        store: MutableMapping[bytes, bytes] = self.table.data
        return store

    def send_changelog(
        self, partition: int | None, key: bytes, value: bytes | None
    ) -> asyncio.Future[Any]:
        """Queue a record after every record written before it; the future resolves when the
        brokers acknowledged it. A drain is started if none is under way; once the sender
        stopped, the record fails at once."""
        acked: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._stopped:
            error = ChangelogSendError("the changelog sender has stopped")
            log.error("changelog_send_failed", topic=self.topic, error=str(error))
            self._mark(partition, key, error)
            acked.set_exception(error)
            return acked
        self._queue.append((partition, key, value, acked))
        self._drained()
        return acked

    async def hand_over(self, tenant: str | None = None) -> None:
        """Return once every record queued so far is in the producer (Faust's flush before an
        offset commit then covers it). Raises the first failure of ``tenant``'s records that
        its reload has not cleared yet: a record refused now or by an earlier drain."""
        if self._queue:
            await asyncio.wait({self._drained()})  # a cancelled caller leaves the drain going
        if tenant is not None and tenant in self._failed:
            raise self._failed[tenant].error

    async def room(self) -> None:
        """Wait while the queue is above the high-water mark (a stalled broker must not grow
        it without bound); failures are kept for their tenants, not raised here."""
        while len(self._queue) >= self.high_water:
            await asyncio.wait({self._drained()})

    def resend(self, tenant: str) -> int:
        """The tenant is reloaded from the table: queue its failed keys again, each with the
        table's value (a tombstone if it has none), so the changelog catches up with the table.
        Returns the records queued."""
        failure = self._failed.pop(tenant, None)
        if failure is None:
            return 0
        keys = failure.to_resend()
        for key in keys:
            sent = self.send_changelog(failure.partition, key, self.data.get(key))
            sent.add_done_callback(_logged)
        log.warning("changelog_records_resent", tenant=tenant, records=len(keys))
        return len(keys)

    def discard(self, tenant: str) -> None:
        """The tenant's partition moved away: its failures are the next owner's to recover
        (from the changelog), never resent from here."""
        self._failed.pop(tenant, None)

    async def stop(self, timeout: float = 30.0) -> None:
        """Before the producer stops: hand the queue over (what is not handed over within
        ``timeout`` fails); records queued from now on fail."""
        self._stopped = True
        if self._queue:
            drain = self._drained()
            _, late = await asyncio.wait({drain}, timeout=timeout)
            if late:
                drain.cancel()  # fails the records still queued
                await asyncio.wait({drain})
        log.info("changelog_sender_stopped", failed_tenants=sorted(self._failed))

    def _drained(self) -> asyncio.Task[None]:
        """The drain task under way, started if there is none."""
        if self._drain is None:
            self._drain = asyncio.ensure_future(self._drain_queue())
        return self._drain

    async def _drain_queue(self) -> None:
        """Send every queued record, in order, including those queued meanwhile."""
        try:
            while self._queue:
                await self._send_next()
        finally:
            self._drain = None

    async def _send_next(self) -> None:
        partition, key, value, acked = self._queue[0]
        try:
            sent = await self.producer().send(self.topic, key, value, partition, None, None)
        except BaseException as exc:  # closed, buffer full, or the drain cancelled (shutdown)
            self._fail_queued(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._queue.popleft()
        asyncio.ensure_future(sent).add_done_callback(
            lambda done: self._relay(done, partition, key, acked)
        )

    def _fail_queued(self, exc: BaseException) -> None:
        """A record was not handed over: it and every record queued after it fail (a
        transaction must not be acknowledged without one of its records), and their tenants
        keep the failure until they are reloaded."""
        if not isinstance(exc, Exception):  # cancelled: the writers get an error they handle
            exc = ChangelogSendError(f"changelog hand-over interrupted: {type(exc).__name__}")
        log.error(
            "changelog_send_failed", topic=self.topic, queued=len(self._queue), error=str(exc)
        )
        failed = list(self._queue)
        self._queue.clear()
        for partition, key, _, acked in failed:
            self._mark(partition, key, exc)
            if not acked.done():
                acked.set_exception(exc)

    def _mark(self, partition: int | None, key: bytes, error: BaseException) -> None:
        tenant = _tenant(key)
        failure = self._failed.setdefault(tenant, Failure(error, partition))
        failure.keys.append(key)

    def _relay(
        self,
        sent: asyncio.Future[Any],
        partition: int | None,
        key: bytes,
        acked: asyncio.Future[Any],
    ) -> None:
        """The producer's acknowledgement of a record, passed on to its writer; a refusal
        also marks the record's tenant."""
        if sent.cancelled():
            error: BaseException | None = ChangelogSendError("changelog send cancelled")
        else:
            error = sent.exception()
        if error is not None:
            log.error("changelog_ack_failed", topic=self.topic, error=str(error))
            self._mark(partition, key, error)
        if acked.done():
            return
        if error is not None:
            acked.set_exception(error)
        else:
            acked.set_result(sent.result())


def _logged(sent: asyncio.Future[Any]) -> None:
    """A resent record's outcome: a failure was logged and marked where it happened."""
    if not sent.cancelled():
        sent.exception()


def _tenant(key: bytes) -> str:
    """The tenant a state key belongs to (``tenant SEP kind SEP item``)."""
    return key.partition(SEP.encode())[0].decode(errors="replace")
