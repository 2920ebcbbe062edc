"""The state table's changelog records, handed to the Kafka producer in the order the state
wrote them (:class:`ChangelogSender`).

Why not Faust's own path (``Table.send_changelog``): it queues every record in Faust's producer
buffer, which a task drains one record per turn, and whoever waits for that buffer (the stream
conductor once it holds 100 records, the offset commit every second) waits record by record.
A fold writes about 50 records, so that path cost more CPU than the changelog's encoding
(docs/kafka.md, "Where a worker's time goes"). Here a write only queues the records; one drain
hands them to the producer (``producer.send``: aiokafka's record batches, acknowledged per
batch), in write order, so a transaction's records still reach its partition before its commit
marker. Faust flushes that producer before it commits offsets; a writer whose offsets follow
its records awaits :meth:`ChangelogSender.hand_over` first.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

import structlog

log = structlog.get_logger(__name__)

Queued = tuple[int | None, bytes, bytes | None, "asyncio.Future[Any]"]


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

    def __init__(self, table: Any, topic: str, producer: Callable[[], RecordProducer]) -> None:
        self.table = table
        self.topic = topic
        self.producer = producer  # Faust's producer, created when the app starts
        self._queue: deque[Queued] = deque()
        self._order = asyncio.Lock()  # one hand-over at a time keeps the write order
        self._drain: asyncio.Task[None] | None = None

    @property
    def data(self) -> MutableMapping[bytes, bytes]:
        store: MutableMapping[bytes, bytes] = self.table.data
        return store

    def send_changelog(
        self, partition: int | None, key: bytes, value: bytes | None
    ) -> asyncio.Future[Any]:
        """Queue a record after every record written before it; the future resolves when the
        brokers acknowledged it. A drain is started if none is under way."""
        acked: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((partition, key, value, acked))
        if self._drain is None:
            self._drain = asyncio.ensure_future(self._drain_queue())
        return acked

    async def hand_over(self) -> None:
        """Return once every record queued so far is in the producer (Faust's flush before an
        offset commit then covers it); raises if the producer refused one."""
        async with self._order:
            while self._queue:
                await self._send_next()

    async def _send_next(self) -> None:
        partition, key, value, acked = self._queue.popleft()
        try:
            sent = await self.producer().send(self.topic, key, value, partition, None, None)
        except Exception as exc:  # the producer is closed or its buffer stayed full
            self._fail_queued(acked, exc)
            raise
        asyncio.ensure_future(sent).add_done_callback(lambda done: _relay(done, acked))

    def _fail_queued(self, first: asyncio.Future[Any], exc: Exception) -> None:
        """A record was not handed over: it and every record queued after it fail (a
        transaction must not be acknowledged without one of its records)."""
        log.error(
            "changelog_send_failed", topic=self.topic, queued=len(self._queue), error=str(exc)
        )
        failed = [first, *(queued[3] for queued in self._queue)]
        self._queue.clear()
        for acked in failed:
            if not acked.done():
                acked.set_exception(exc)

    async def _drain_queue(self) -> None:
        try:
            await self.hand_over()
        except Exception:  # already logged; the writers' futures carry it
            return
        finally:
            self._drain = None


def _relay(sent: asyncio.Future[Any], acked: asyncio.Future[Any]) -> None:
    """The producer's acknowledgement of a record, passed on to its writer."""
    if acked.done():
        return
    if sent.cancelled():
        acked.cancel()
    elif sent.exception() is not None:
        acked.set_exception(sent.exception())  # type: ignore[arg-type]
    else:
        acked.set_result(sent.result())
