"""``foldmem notify``: the intents topic of a Kafka deployment delivered to webhooks, a JSONL
file and the terminal, through the data dir's outbox; and ``--replay-dead-letters``.

- Each batch consumed from the intents topic is appended to the outbox (DATA_DIR/foldmem.db,
  :mod:`stream_app.outbox.table`), then its offsets are committed: a restart goes on after the
  last committed batch, and nothing consumed is lost.
- The outbox feeds each sink as in the embedded mode (:mod:`stream_app.outbox.delivery`): a
  webhook and the JSONL file get each message id once (a replay of the topic, a worker that
  re-published after a crash, are skipped), a webhook is signed and retried with backoff for
  hours across restarts, then dead-lettered; the terminal gets every message.
- :func:`replay_dead_letters` takes a webhook's dead-lettered messages out of
  DATA_DIR/webhook-deadletter.jsonl, appends them to the outbox for that webhook only and
  delivers them for up to FOLDMEM_WEBHOOK_DRAIN_S; what still fails is retried by the next
  ``foldmem run`` or ``notify`` for that webhook (and dead-lettered again after the horizon).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import structlog

from connectors.sinks import JsonlSink, Sink, StdoutSink
from schemas.errors import ConfigError
from schemas.intents import IntentMessage
from stream_app.embedded.store import Store
from stream_app.outbox.delivery import Deliveries, Delivery
from stream_app.outbox.sinks import dead_letter_path, delivery, webhook_sink
from stream_app.outbox.table import Outbox
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class ReplayStats:
    replayed: int = 0
    delivered: int = 0
    dead_lettered: int = 0
    pending: int = 0
    duplicates: int = 0

    def line(self, url: str) -> str:
        return (
            f"replayed {self.replayed} dead-lettered message(s) to {url}: delivered "
            f"{self.delivered}, dead-lettered again {self.dead_lettered}, already delivered "
            f"{self.duplicates}, still queued {self.pending}"
            + (" (retried by the next foldmem run / notify)" if self.pending else "")
        )


def replay_dead_letters(settings: Settings, url: str, secret: str | None = None) -> ReplayStats:
    """Queue the webhook's dead-lettered messages again (taking them out of the dead-letter
    file) and deliver them for up to FOLDMEM_WEBHOOK_DRAIN_S."""
    sink = webhook_sink(settings, url, secret)
    store = Store(settings.db_path)
    try:
        outbox = Outbox(store)
        feed = delivery(settings, outbox, sink)  # its cursor: before the replayed messages
        messages = _take_dead_letters(dead_letter_path(settings), url)
        outbox.append(messages, sink=sink.name)
        asyncio.run(Deliveries([feed], drain_s=settings.webhook_drain_s).close())
    finally:
        store.close()
    done = feed.stats
    return ReplayStats(
        replayed=len(messages),
        delivered=done.delivered,
        dead_lettered=done.dead_lettered,
        pending=done.pending,
        duplicates=done.duplicates,
    )


def _take_dead_letters(path: Path, url: str) -> list[IntentMessage]:
    """The messages dead-lettered for ``url``, removed from the file (the others stay)."""
    if not path.exists():
        return []
    taken: list[IntentMessage] = []
    with path.open("r+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        kept: list[bytes] = []
        for line in fh.read().splitlines():
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
                mine = record.get("url") == url
                message = IntentMessage.model_validate(record["message"]) if mine else None
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                mine, message = False, None
            if message is None:
                kept.append(line)
            else:
                taken.append(message)
        fh.seek(0)
        fh.write(b"".join(k + b"\n" for k in kept))
        fh.truncate()
    return taken


@dataclass
class SinkStats:
    delivered: int = 0
    duplicates: int = 0  # delivered before (skipped)
    failed: int = 0  # given up on (webhook: written to DATA_DIR/webhook-deadletter.jsonl)
    pending: int = 0  # still in the outbox at the end (delivered by the next process)


@dataclass
class NotifyStats:
    received: int = 0
    unreadable: int = 0
    sinks: dict[str, SinkStats] = field(default_factory=dict)

    def line(self) -> str:
        per = "; ".join(
            f"{name}: delivered {s.delivered}, duplicates skipped {s.duplicates}"
            + (f", failed {s.failed}" if s.failed else "")
            + (f", still queued {s.pending}" if s.pending else "")
            for name, s in self.sinks.items()
        )
        return f"received {self.received} intent message(s), unreadable {self.unreadable}; " + (
            per or "no sinks"
        )


def build_sinks(
    settings: Settings,
    webhooks: Sequence[str],
    secret: str | None,
    jsonl: Path | None,
    stdout: bool,
) -> dict[str, Sink]:
    """The sinks of ``foldmem notify``, by the name its summary gives them."""
    sinks: dict[str, Sink] = {}
    for url in webhooks:
        sinks[url] = webhook_sink(settings, url, secret)
    if jsonl is not None:
        sinks[str(jsonl)] = JsonlSink(jsonl)
    if stdout:
        sinks["stdout"] = StdoutSink()
    if not sinks:
        raise ConfigError("nothing to notify: pass --webhook URL, --jsonl FILE or --stdout")
    return sinks


async def notify_from_kafka(
    settings: Settings,
    sinks: dict[str, Sink],
    *,
    topic: str | None = None,
    idle_exit: float | None = None,
    stop: asyncio.Event | None = None,
) -> NotifyStats:
    """Consume the intents topic (a consumer group per set of sinks) until stopped or idle;
    the outbox delivers to the sinks meanwhile, and for up to FOLDMEM_WEBHOOK_DRAIN_S after."""
    from aiokafka import AIOKafkaConsumer

    stop = stop or asyncio.Event()
    name = topic or settings.kafka_intents_topic
    group = f"{settings.kafka_app_id}-notify-{_digest('|'.join(sorted(sinks)))}"
    session_ms = int(settings.kafka_session_timeout * 1000)
    consumer = AIOKafkaConsumer(
        name,
        bootstrap_servers=settings.kafka_broker_list,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=session_ms,
        heartbeat_interval_ms=max(500, session_ms // 5),
    )
    stats = NotifyStats(sinks={label: SinkStats() for label in sinks})
    store = Store(settings.db_path)
    outbox = Outbox(store)
    feeds: dict[str, Delivery] = {
        label: delivery(settings, outbox, sink, once=not isinstance(sink, StdoutSink))
        for label, sink in sinks.items()
    }
    deliveries = Deliveries(list(feeds.values()), drain_s=settings.webhook_drain_s)
    delivering = asyncio.Event()
    background = asyncio.create_task(deliveries.run(delivering))
    try:
        try:
            await consumer.start()
        except Exception as exc:
            raise ConfigError(f"Kafka brokers {settings.kafka_brokers} unreachable: {exc}") from exc
        log.info("notify_started", topic=name, group=group, sinks=list(sinks))
        await _consume(consumer, outbox, deliveries, stats, stop, idle_exit)
    finally:
        try:
            await consumer.stop()
        except Exception as exc:  # stopping must not hide the error that got us here
            log.warning("notify_consumer_stop_failed", error=repr(exc))
        delivering.set()
        with contextlib.suppress(asyncio.CancelledError):
            await background
        try:
            await deliveries.close()
        finally:
            store.close()
        for label, feed in feeds.items():
            done = feed.stats
            stats.sinks[label] = SinkStats(
                done.delivered, done.duplicates, done.dead_lettered, done.pending
            )
    log.info("notify_stopped", received=stats.received, unreadable=stats.unreadable)
    return stats


async def _consume(
    consumer: Any,
    outbox: Outbox,
    deliveries: Deliveries,
    stats: NotifyStats,
    stop: asyncio.Event,
    idle_exit: float | None,
) -> None:
    loop = asyncio.get_running_loop()
    idle_since = loop.time()
    while not stop.is_set():
        batch = await consumer.getmany(timeout_ms=500, max_records=200)
        now = loop.time()
        if not batch:
            if idle_exit is not None and now - idle_since >= idle_exit:
                return
            continue
        idle_since = now
        offsets: dict[Any, int] = {}
        messages: list[IntentMessage] = []
        for partition, records in batch.items():
            for record in records:
                offsets[partition] = record.offset + 1
                stats.received += 1
                try:
                    messages.append(IntentMessage.model_validate_json(record.value))
                except ValueError as exc:
                    stats.unreadable += 1
                    log.warning(
                        "notify_unreadable",
                        partition=partition.partition,
                        offset=record.offset,
                        error=str(exc).splitlines()[0],
                    )
        outbox.append(messages)  # durable before the offsets move
        await consumer.commit(offsets)
        deliveries.wake()
