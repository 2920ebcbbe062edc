"""From the outbox to each sink: the one durable path of an intent message to its destinations.

:class:`Delivery` feeds one sink from the outbox (:mod:`stream_app.outbox.table`), in order:
it hands the sink the messages after its cursor, flushes, and moves the cursor over what the
sink confirmed. A sink that fails keeps its place: the message is tried again after an
exponential backoff with jitter (at least the receiver's Retry-After), durably across
restarts, and nothing behind it overtakes it. It is dead-lettered
(DATA_DIR/webhook-deadletter.jsonl) only when the destination refuses it (a 4xx other than
408/425/429) or when an attempt fails once the message is older than the sink's horizon
(``FOLDMEM_WEBHOOK_RETRY_HOURS`` for a webhook; local files have none). A sink that delivers
each message once (a webhook) records the ids it delivered and skips them when they come
again (a replay of the topic, a reopened intent's second ``deferred``).

:class:`Deliveries` is every sink of one process: ``publish`` delivers the inline ones (the
terminal, ``intents.jsonl``) right after a write commits, ``run`` keeps delivering all of them
in the background (a long-running process), ``close`` drains them for up to ``drain_s``
seconds and leaves the rest in the outbox for the next process. One process at a time
delivers a sink (its lock under DATA_DIR/locks/).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
import structlog

from connectors.sinks import Sink, SinkError
from connectors.sinks.base import message_body
from schemas.intents import IntentMessage
from stream_app.embedded.interlock import TenantLocks
from stream_app.outbox.table import Cursor, Outbox, OutboxRow

log = structlog.get_logger(__name__)

BUSY_POLL_S = 0.5  # another process holds the sink: look again after this
IDLE_POLL_S = 1.0  # nothing to deliver: look for rows other processes committed after this


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter: ``first_delay_s * 2**(n-1)`` capped at
    ``max_delay_s`` (at least a receiver's Retry-After), for ``horizon_s`` after a message was
    committed (None: for ever)."""

    first_delay_s: float = 1.0
    max_delay_s: float = 600.0
    horizon_s: float | None = None

    def delay(self, attempts: int, retry_after: float | None = None) -> float:
        base = min(self.max_delay_s, self.first_delay_s * 2 ** max(0, attempts - 1))
        delay = base / 2 + random.uniform(0, base / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay_s))
        return delay


@dataclass
class DeliveryStats:
    """What one process's delivery did: delivered, skipped as delivered before, given up on
    (dead-lettered); ``pending`` is what was left in the outbox when it closed."""

    delivered: int = 0
    duplicates: int = 0
    dead_lettered: int = 0
    pending: int = 0


class Delivery:
    def __init__(
        self,
        sink: Sink,
        outbox: Outbox,
        *,
        once: bool = False,
        policy: RetryPolicy | None = None,
        dead_letters: Path | None = None,
        locks: TenantLocks | None = None,
        clock: Callable[[], float] = time.time,
        batch: int = 100,
    ) -> None:
        self.sink = sink
        self.outbox = outbox
        self.once = once  # each message id once (recorded), or every message
        self.policy = policy or RetryPolicy()
        self.dead_letters = dead_letters
        self.locks = locks
        self.clock = clock
        self.batch = batch
        self.stats = DeliveryStats()
        self._delivering = False  # a pass of this process is under way (publish and run)
        outbox.cursor(sink.name)  # a new sink gets what is emitted from now on

    async def deliver(self) -> float | None:
        """Deliver what is due, in order. Seconds until an attempt is due again (a retry's
        backoff, another process delivering this sink), or None: the sink is caught up."""
        if self._delivering:
            return BUSY_POLL_S
        self._delivering = True
        try:
            if self.locks is None:
                return await self._deliver()
            with self.locks.try_hold(f"~outbox:{self.sink.name}") as mine:
                if not mine:
                    return BUSY_POLL_S
                return await self._deliver()
        finally:
            self._delivering = False

    def pending(self) -> int:
        return self.outbox.pending(self.sink.name)

    async def _deliver(self) -> float | None:
        name = self.sink.name
        while True:
            cursor = self.outbox.cursor(name)
            wait = cursor.next_at - self.clock()
            if wait > 0:
                return wait
            rows = self.outbox.rows(name, cursor.seq, self.batch)
            if not rows:
                return None
            later = await self._batch(cursor, rows)
            if later is not None:
                return later

    async def _batch(self, cursor: Cursor, rows: Sequence[OutboxRow]) -> float | None:
        """Hand the rows to the sink until one fails, flush, pass what was confirmed; then
        the failure, if any (None: go on with the next rows)."""
        name = self.sink.name
        done, duplicates = cursor.seq, 0
        delivered: list[str] = []
        failed: tuple[OutboxRow, BaseException] | None = None
        for row in rows:
            message_id = row.message.message_id
            if self.once and (
                message_id in delivered or self.outbox.delivered_before(name, message_id)
            ):
                duplicates += 1
                done = row.seq
                continue
            try:
                await self.sink.add(row.message)
            except Exception as exc:
                failed = (row, exc)
                break
            delivered.append(message_id)
            done = row.seq
        try:
            await self.sink.flush()
        except Exception as exc:  # nothing added is confirmed: the first of them failed
            first = next(r for r in rows if r.seq > cursor.seq)
            return self._failed(first, cursor.attempts, exc)
        if done > cursor.seq:
            self.outbox.passed(name, done, delivered if self.once else ())
            self.stats.delivered += len(delivered)
            self.stats.duplicates += duplicates
        if failed is None:
            return None
        row, error = failed
        return self._failed(row, cursor.attempts if done == cursor.seq else 0, error)

    def _failed(self, row: OutboxRow, attempts: int, exc: BaseException) -> float | None:
        """Try the row again later, or give up on it (None: the cursor passed it)."""
        name = self.sink.name
        if isinstance(exc, SinkError):
            reason, retryable, retry_after = exc.reason, exc.retryable, exc.retry_after
        else:
            reason, retryable, retry_after = f"{type(exc).__name__}: {exc}", True, None
        attempts += 1
        now = self.clock()
        horizon = self.policy.horizon_s
        if not retryable or (horizon is not None and now - row.created_at >= horizon):
            self._dead_letter(row.message, reason, attempts)
            self.outbox.passed(name, row.seq)
            self.stats.dead_lettered += 1
            return None
        delay = self.policy.delay(attempts, retry_after)
        self.outbox.retry_later(name, attempts, now + delay, reason)
        log.info(
            "delivery_retry_later",
            sink=name,
            message_id=row.message.message_id,
            attempt=attempts,
            reason=reason,
            delay=round(delay, 3),
        )
        return delay

    def _dead_letter(self, message: IntentMessage, reason: str, attempts: int) -> None:
        log.warning(
            "delivery_dead_letter",
            sink=self.sink.name,
            message_id=message.message_id,
            reason=reason,
            attempts=attempts,
        )
        if self.dead_letters is not None:
            url = getattr(self.sink, "url", self.sink.name)
            write_dead_letter(self.dead_letters, url, message, reason, attempts)


def write_dead_letter(
    path: Path, url: str, message: IntentMessage, reason: str, attempts: int
) -> None:
    """Append a message given up on to the dead-letter file (one JSON line)."""
    record = {
        "message_id": message.message_id,
        "url": url,
        "reason": reason,
        "attempts": attempts,
        "failed_at": datetime.now(UTC).isoformat(),
        "message": orjson.loads(message_body(message)),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # a replay may be rewriting the file
        fh.write(orjson.dumps(record) + b"\n")


class Deliveries:
    def __init__(
        self, deliveries: Sequence[Delivery], *, inline: Iterable[str] = (), drain_s: float = 10.0
    ) -> None:
        self.deliveries = list(deliveries)
        self.inline = set(inline)  # sink names delivered right after each write
        self.drain_s = drain_s
        self._wake = asyncio.Event()
        self._closed = False

    @property
    def sinks(self) -> list[Sink]:
        return [d.sink for d in self.deliveries]

    async def publish(self) -> None:
        """Deliver the inline sinks now; wake the background ones."""
        for delivery in self.deliveries:
            if delivery.sink.name in self.inline:
                await delivery.deliver()
        self.wake()

    def wake(self) -> None:
        """New rows are in the outbox: the background deliveries look now."""
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Keep every sink delivered until ``stop`` (one task per sink)."""
        await asyncio.gather(*(self._keep(d, stop) for d in self.deliveries))

    async def _keep(self, delivery: Delivery, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                wait = await delivery.deliver()
            except Exception:  # a delivery bug must not end the process's deliveries
                log.exception("delivery_failed", sink=delivery.sink.name)
                wait = IDLE_POLL_S
            await _sleep(min(IDLE_POLL_S if wait is None else wait, IDLE_POLL_S), self._wake, stop)

    async def drain(self, seconds: float) -> None:
        """Deliver every sink until none has anything due, or for ``seconds`` at most."""
        deadline = time.monotonic() + seconds
        while True:
            waits = [await d.deliver() for d in self.deliveries]
            left = deadline - time.monotonic()
            if all(w is None for w in waits) or left <= 0:
                return
            due = min(w for w in waits if w is not None)
            await asyncio.sleep(max(0.005, min(due, left, BUSY_POLL_S)))

    async def close(self) -> None:
        """Drain for up to ``drain_s`` seconds, then close the sinks; what is left waits in the
        outbox for the next process."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.drain(self.drain_s)
        finally:
            for delivery in self.deliveries:
                delivery.stats.pending = delivery.pending()
                if delivery.stats.pending:
                    log.warning(
                        "delivery_pending",
                        sink=delivery.sink.name,
                        pending=delivery.stats.pending,
                        note="kept in the outbox: delivered by the next foldmem run / notify",
                    )
                await delivery.sink.close()


async def _sleep(seconds: float, wake: asyncio.Event, stop: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(stop.wait())]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait(waiters, timeout=max(seconds, 0.005), return_when="FIRST_COMPLETED")
    for waiter in waiters:
        waiter.cancel()
    wake.clear()
