"""Deliver intent messages to notifiers: webhooks (signed, retried, once each), JSONL, stdout.

- :class:`WebhookOutput` is an embedded-mode hub output (``FOLDMEM_WEBHOOK_URL``): ``emit``
  persists the message in a small SQLite queue and returns; a background thread delivers it
  through ``DedupingSink(WebhookSink)``, so a slow or failing webhook never blocks folding
  and a message emitted before a crash is delivered after the restart.
- :func:`notify_from_kafka` consumes the intents topic (``foldmem notify``) and hands each
  message to every sink; offsets are committed after the sinks took the batch.
- Each webhook has its own dedup state under DATA_DIR/notify/, keyed by the message id
  (intent id + status), so every intent status reaches every webhook once.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from connectors.sinks import DedupingSink, IntentSink, JsonlSink, StdoutSink, WebhookSink
from schemas.errors import ConfigError
from schemas.intents import IntentMessage
from stream_app.settings import WEBHOOK_DEADLETTER_FILE, Settings

log = structlog.get_logger(__name__)


def state_dir(settings: Settings) -> Path:
    return settings.data_dir / "notify"


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


def webhook_sink(
    settings: Settings, url: str, secret: str | None = None, *, backoff: float = 0.5
) -> DedupingSink:
    """WebhookSink wrapped in a persisted DedupingSink (one state file per URL)."""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"webhook URL must start with http:// or https://, got {url!r}")
    inner = WebhookSink(
        url,
        webhook_secret(settings, secret),
        max_attempts=settings.webhook_max_attempts,
        backoff=backoff,
        dead_letter_path=settings.data_dir / WEBHOOK_DEADLETTER_FILE,
    )
    return DedupingSink(inner, state_dir(settings) / f"webhook-{_digest(url)}.db")


class WebhookOutput:
    """A hub output (sync ``emit``) delivering to a webhook from a background thread."""

    def __init__(self, sink: IntentSink, queue_path: Path) -> None:
        self.sink = sink
        queue_path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(queue_path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "message_id TEXT NOT NULL, body BLOB NOT NULL, added_at TEXT NOT NULL)"
        )
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._main, name="foldmem-webhook", daemon=True)
        self._thread.start()
        self._wake.set()  # deliver what a previous process left behind

    def emit(self, message: IntentMessage) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO pending (message_id, body, added_at) VALUES (?, ?, ?)",
                (message.message_id, message.model_dump_json(), datetime.now(UTC).isoformat()),
            )
        self._wake.set()

    def pending(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM pending").fetchone()
        return int(row[0])

    def close(self, timeout: float = 60.0) -> None:
        """Deliver what is queued (up to `timeout` seconds), then stop the thread."""
        self._closing.set()
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("webhook_close_timeout", pending=self.pending())
            return
        with self._lock:
            self._db.close()

    def _main(self) -> None:
        asyncio.run(self._loop())

    async def _loop(self) -> None:
        try:
            while True:
                await asyncio.to_thread(self._wake.wait, 0.5)
                self._wake.clear()
                await self._drain()
                if self._closing.is_set():
                    await self._drain()
                    return
        finally:
            await self.sink.close()

    async def _drain(self) -> None:
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT seq, body FROM pending ORDER BY seq LIMIT 100"
                ).fetchall()
            if not rows:
                return
            for seq, body in rows:
                try:
                    await self.sink.add(IntentMessage.model_validate_json(body))
                except Exception as exc:  # a broken message must not block the queue
                    log.error("webhook_output_failed", seq=seq, error=str(exc))
                with self._lock:
                    self._db.execute("DELETE FROM pending WHERE seq = ?", (seq,))
            await self.sink.flush()


def webhook_output(settings: Settings) -> WebhookOutput:
    """The embedded-mode output for FOLDMEM_WEBHOOK_URL / FOLDMEM_WEBHOOK_SECRET."""
    url = settings.webhook_url or ""
    sink = webhook_sink(settings, url)
    return WebhookOutput(sink, state_dir(settings) / f"webhook-{_digest(url)}-queue.db")


@dataclass
class SinkStats:
    delivered: int = 0
    duplicates: int = 0  # delivered before (the message id is in the sink's dedup state)
    failed: int = 0  # given up on (webhook: written to DATA_DIR/webhook-deadletter.jsonl)


@dataclass
class NotifyStats:
    received: int = 0
    unreadable: int = 0
    sinks: dict[str, SinkStats] = field(default_factory=dict)

    def line(self) -> str:
        per = "; ".join(
            f"{name}: delivered {s.delivered}, duplicates skipped {s.duplicates}"
            + (f", failed {s.failed}" if s.failed else "")
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
    """Hand one message to a sink and count what became of it."""
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


def build_sinks(
    settings: Settings,
    webhooks: Sequence[str],
    secret: str | None,
    jsonl: Path | None,
    stdout: bool,
) -> dict[str, IntentSink]:
    sinks: dict[str, IntentSink] = {}
    for url in webhooks:
        sinks[url] = webhook_sink(settings, url, secret)
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
        for sink in sinks.values():
            await sink.close()
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
