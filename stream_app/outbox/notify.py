"""Deliver intent messages to notifiers: webhooks (signed, retried, once each), JSONL, stdout.

- :class:`WebhookOutput` delivers to one webhook through its durable queue
  (:mod:`stream_app.outbox.webhook_queue`) from a background thread, so a slow or failing webhook
  never blocks folding. It is the embedded mode's hub output (``FOLDMEM_WEBHOOK_URL``) and,
  wrapped in :class:`QueuedWebhook`, a sink of ``foldmem notify``.
- Retries: after a failed attempt the message waits (exponential backoff with jitter from
  ``FOLDMEM_WEBHOOK_BACKOFF_S``, capped at ``FOLDMEM_WEBHOOK_MAX_BACKOFF_S``, at least the
  receiver's Retry-After) and the webhook is not tried again before then (one probe per wait
  during an outage, then everything queued in order). The queue survives restarts: what was
  not delivered when a process stopped is delivered by the next one. A message is
  dead-lettered (DATA_DIR/webhook-deadletter.jsonl) only when the receiver refuses it (a 4xx
  other than 408/425/429) or when an attempt fails after ``FOLDMEM_WEBHOOK_RETRY_HOURS`` (24).
- :func:`replay_dead_letters` (``foldmem notify --replay-dead-letters --webhook URL``) queues
  the dead-lettered messages of a webhook again and delivers them.
- :func:`notify_from_kafka` consumes the intents topic (``foldmem notify``) and hands each
  message to every sink; offsets are committed after the sinks took the batch (a webhook
  takes it into its durable queue).
- Each webhook has its own state under DATA_DIR/notify/, keyed by the message id (intent id
  + status), so every intent status reaches every webhook once.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import structlog

from connectors.sinks import DedupingSink, IntentSink, JsonlSink, StdoutSink, WebhookSink
from connectors.sinks.webhook import write_dead_letter
from schemas.errors import ConfigError
from schemas.intents import IntentMessage
from stream_app.embedded.interlock import TenantLocks
from stream_app.outbox.webhook_queue import RetryPolicy, WebhookQueue
from stream_app.settings import WEBHOOK_DEADLETTER_FILE, Settings

log = structlog.get_logger(__name__)

_IDLE_POLL_S = 0.5  # how often an idle delivery thread looks for rows other processes queued


def state_dir(settings: Settings) -> Path:
    return settings.data_dir / "notify"


def dead_letter_path(settings: Settings) -> Path:
    return settings.data_dir / WEBHOOK_DEADLETTER_FILE


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def webhook_secret(settings: Settings, secret: str | None = None) -> str:
    value = secret or (
        settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    )
    if not value:
        raise ConfigError(
            "a webhook needs a signing secret: pass --secret or set FOLDMEM_WEBHOOK_SECRET"
        )
    return value


def retry_policy(settings: Settings) -> RetryPolicy:
    return RetryPolicy(
        first_delay_s=settings.webhook_backoff_s,
        max_delay_s=settings.webhook_max_backoff_s,
        horizon_s=settings.webhook_retry_hours * 3600.0,
    )


class WebhookOutput:
    """Delivers one webhook's queue from a background thread; ``emit`` queues (a hub output)."""

    def __init__(
        self,
        sender: WebhookSink,
        queue: WebhookQueue,
        policy: RetryPolicy,
        dead_letters: Path,
        locks: TenantLocks,
        drain_s: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sender = sender
        self.queue = queue
        self.policy = policy
        self.dead_letters = dead_letters
        self.drain_s = drain_s
        self._locks = locks
        self._clock = clock
        self.delivered = 0
        self.dead_lettered = 0
        self.duplicates = 0  # delivered before: not queued again
        self.left_pending = 0  # still queued when the output was closed
        self._paused_until = 0.0  # the webhook failed: no attempt before this time
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._main, name="foldmem-webhook", daemon=True)
        self._thread.start()
        self._wake.set()  # deliver what a previous process left behind

    @property
    def url(self) -> str:
        return self.sender.url

    def emit(self, message: IntentMessage) -> None:
        """Queue the message (durably), unless its id was delivered before."""
        if not self.queue.add(message):
            self.duplicates += 1
            return
        self._wake.set()

    def pending(self) -> int:
        return self.queue.pending()

    def close(self, timeout: float | None = None) -> None:
        """Go on delivering for up to ``drain_s`` seconds, then stop; what is left stays
        queued for the next process."""
        self._closing.set()
        self._wake.set()
        self._thread.join(self.drain_s + 30.0 if timeout is None else timeout)
        if self._thread.is_alive():
            log.warning("webhook_close_timeout", url=self.url)
            return
        self.left_pending = self.queue.pending()
        if self.left_pending:
            log.warning(
                "webhook_pending",
                url=self.url,
                pending=self.left_pending,
                note="kept in the queue: delivered by the next foldmem run / notify",
            )
        self.queue.close()

    # ------------------------------------------------------------ the thread
    def _main(self) -> None:
        asyncio.run(self._loop())

    async def _loop(self) -> None:
        deadline: float | None = None
        try:
            while True:
                wait = await self._pass()
                if self._closing.is_set():
                    now = time.monotonic()
                    deadline = now + self.drain_s if deadline is None else deadline
                    if now >= deadline or self.queue.pending() == 0:
                        return
                    wait = min(wait, deadline - now)
                await asyncio.to_thread(self._wake.wait, max(wait, 0.005))
                self._wake.clear()
        finally:
            await self.sender.close()

    async def _pass(self) -> float:
        """Attempt every due message once (in queue order); seconds until the next is due."""
        now = self._clock()
        if now < self._paused_until:
            return min(self._paused_until - now, _IDLE_POLL_S)
        with self._locks.try_hold("webhook") as mine:  # one process delivers at a time
            if not mine:
                return _IDLE_POLL_S
            for row in self.queue.due(now):
                outcome = await self.sender.attempt(row.message)
                if outcome.ok:
                    self.queue.delivered(row.seq, row.message.message_id)
                    self.delivered += 1
                    log.debug("webhook_delivered", message_id=row.message.message_id)
                    continue
                attempts, now = row.attempts + 1, self._clock()
                if not outcome.retryable or now - row.first_at >= self.policy.horizon_s:
                    write_dead_letter(
                        self.dead_letters, self.url, row.message, outcome.reason, attempts
                    )
                    self.queue.drop(row.seq)
                    self.dead_lettered += 1
                    continue
                next_at = now + self.policy.delay(attempts, outcome.retry_after)
                self.queue.retry_later(row.seq, attempts, next_at, outcome.reason)
                self._paused_until = next_at  # the webhook fails: probe it again then
                log.info(
                    "webhook_retry_later",
                    message_id=row.message.message_id,
                    attempt=attempts,
                    reason=outcome.reason,
                    delay=round(next_at - now, 3),
                )
                return min(next_at - now, _IDLE_POLL_S)
        nxt = self.queue.next_at()
        return _IDLE_POLL_S if nxt is None else min(max(nxt - self._clock(), 0.0), _IDLE_POLL_S)


class QueuedWebhook:
    """A :class:`WebhookOutput` as an async IntentSink (``foldmem notify``)."""

    def __init__(self, output: WebhookOutput) -> None:
        self.output = output

    async def add(self, message: IntentMessage) -> None:
        self.output.emit(message)

    async def flush(self) -> None:
        return None  # queued durably by add

    async def close(self) -> None:
        await asyncio.to_thread(self.output.close)


def webhook_output(
    settings: Settings, url: str | None = None, secret: str | None = None
) -> WebhookOutput:
    """The delivery of one webhook (default FOLDMEM_WEBHOOK_URL / FOLDMEM_WEBHOOK_SECRET)."""
    url = url or settings.webhook_url or ""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"webhook URL must start with http:// or https://, got {url!r}")
    folder = state_dir(settings)
    sender = WebhookSink(url, webhook_secret(settings, secret), max_attempts=1)
    queue = WebhookQueue(
        folder / f"webhook-{_digest(url)}-queue.db", folder / f"webhook-{_digest(url)}.db"
    )
    return WebhookOutput(
        sender,
        queue,
        retry_policy(settings),
        dead_letter_path(settings),
        TenantLocks(folder / "locks" / _digest(url)),
        drain_s=settings.webhook_drain_s,
    )


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
    file) and deliver them for up to FOLDMEM_WEBHOOK_DRAIN_S; what still fails is retried (and
    dead-lettered again after the horizon) like any message."""
    output = webhook_output(settings, url, secret)
    stats = ReplayStats()
    try:
        for message in _take_dead_letters(dead_letter_path(settings), url):
            stats.replayed += 1
            output.emit(message)
    finally:
        output.close()
    stats.delivered, stats.dead_lettered = output.delivered, output.dead_lettered
    stats.duplicates, stats.pending = output.duplicates, output.left_pending
    return stats


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
    duplicates: int = 0  # delivered before (the message id is in the sink's dedup state)
    failed: int = 0  # given up on (webhook: written to DATA_DIR/webhook-deadletter.jsonl)
    pending: int = 0  # webhook: still queued at the end (delivered by the next process)


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


def _failures(sink: IntentSink) -> int:
    """How many messages the sink has given up on so far (a webhook's dead letters)."""
    inner = sink.inner if isinstance(sink, DedupingSink) else sink
    return inner.dead_lettered if isinstance(inner, WebhookSink) else 0


async def deliver(sink: IntentSink, message: IntentMessage, stats: SinkStats) -> None:
    """Hand one message to a sink and count what became of it (a queued webhook counts in
    its output: see :func:`queued_stats`)."""
    if isinstance(sink, QueuedWebhook):
        await sink.add(message)
        return
    if isinstance(sink, DedupingSink) and sink.seen(message.message_id):
        stats.duplicates += 1
        log.debug("notify_duplicate", message_id=message.message_id)
        return
    failed_before = _failures(sink)
    await sink.add(message)
    if _failures(sink) > failed_before:
        stats.failed += 1
    else:
        stats.delivered += 1


def queued_stats(output: WebhookOutput, stats: SinkStats) -> None:
    """What a queued webhook did in this process: delivered, skipped, given up on."""
    stats.delivered = output.delivered
    stats.duplicates = output.duplicates
    stats.failed = output.dead_lettered
    stats.pending = output.left_pending


def build_sinks(
    settings: Settings,
    webhooks: Sequence[str],
    secret: str | None,
    jsonl: Path | None,
    stdout: bool,
) -> dict[str, IntentSink]:
    sinks: dict[str, IntentSink] = {}
    for url in webhooks:
        sinks[url] = QueuedWebhook(webhook_output(settings, url, secret))
    if jsonl is not None:
        sinks[str(jsonl)] = DedupingSink(
            JsonlSink(jsonl), state_dir(settings) / f"jsonl-{_digest(str(jsonl.resolve()))}.db"
        )
    if stdout:
        sinks["stdout"] = StdoutSink()
    if not sinks:
        raise ConfigError("nothing to notify: pass --webhook URL, --jsonl FILE or --stdout")
    return sinks


async def notify_from_kafka(
    settings: Settings,
    sinks: dict[str, IntentSink],
    *,
    topic: str | None = None,
    idle_exit: float | None = None,
    stop: asyncio.Event | None = None,
) -> NotifyStats:
    """Consume the intents topic (consumer group per set of sinks) until stopped or idle.

    Offsets are committed after every sink took (and flushed) the batch: a restart goes on
    after the last committed batch, and a batch that was delivered but not committed is
    skipped by the sinks' dedup state.
    """
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
    stats = NotifyStats(sinks={k: SinkStats() for k in sinks})
    try:
        try:
            await consumer.start()
        except Exception as exc:
            raise ConfigError(f"Kafka brokers {settings.kafka_brokers} unreachable: {exc}") from exc
        log.info("notify_started", topic=name, group=group, sinks=list(sinks))
        await _consume(consumer, sinks, stats, stop, idle_exit)
    finally:
        try:
            await consumer.stop()
        except Exception as exc:  # stopping must not hide the error that got us here
            log.warning("notify_consumer_stop_failed", error=repr(exc))
        for name, sink in sinks.items():
            await sink.close()
            if isinstance(sink, QueuedWebhook):
                queued_stats(sink.output, stats.sinks[name])
    log.info("notify_stopped", received=stats.received, unreadable=stats.unreadable)
    return stats


async def _consume(
    consumer: Any,
    sinks: dict[str, IntentSink],
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
        for partition, records in batch.items():
            for record in records:
                offsets[partition] = record.offset + 1
                stats.received += 1
                try:
                    message = IntentMessage.model_validate_json(record.value)
                except ValueError as exc:
                    stats.unreadable += 1
                    log.warning(
                        "notify_unreadable",
                        partition=partition.partition,
                        offset=record.offset,
                        error=str(exc).splitlines()[0],
                    )
                    continue
                for sink_name, sink in sinks.items():
                    await deliver(sink, message, stats.sinks[sink_name])
        for sink in sinks.values():
            await sink.flush()
        await consumer.commit(offsets)
