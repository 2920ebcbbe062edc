"""foldmem's topics: created before anything subscribes or produces (partition counts
checked), a tenant's partition, and what a worker writes to the intents and dead-letter topics.

Brokers that auto-create topics (Kafka with auto.create.topics.enable, tansu) would otherwise
create ``foldmem.events`` with their default partition count on the first metadata request;
the worker derives a tenant's partition (and so where its state lives) from the configured
count, so a mismatch is refused with a ConfigError instead of folding on wrong partitions.

- intents topic: key = tenant, value = IntentMessage JSON, header ``message_id`` (intent id +
  status) for consumers to deduplicate on (:class:`IntentTopic`).
- dead-letter topic: the original key and bytes; the reason and the source topic, partition
  and offset in headers (:class:`DeadLetterTopic`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

import structlog
from aiokafka.partitioner import murmur2

from schemas.errors import ConfigError
from schemas.intents import IntentMessage
from stream_app.kafka.metrics import WorkerMetrics
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


def partition_for(tenant: str, partitions: int) -> int:
    """The partition of a tenant: Kafka's default partitioner over key = tenant (murmur2)."""
    return (murmur2(tenant.encode()) & 0x7FFFFFFF) % partitions


def topic_plan(settings: Settings) -> dict[str, tuple[int, dict[str, str]]]:
    """name -> (partitions, config) of every topic foldmem uses besides Faust's own."""
    p = settings.kafka_partitions
    return {
        settings.kafka_events_topic: (p, {}),
        settings.kafka_intents_topic: (p, {}),
        settings.kafka_deadletter_topic: (1, {}),
        f"{settings.kafka_app_id}-state-changelog": (p, {"cleanup.policy": "compact"}),
    }


async def ensure_topics(settings: Settings, *, only: list[str] | None = None) -> dict[str, int]:
    """Create missing topics; return name -> partitions; ConfigError on an events mismatch."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    plan = topic_plan(settings)
    if only is not None:
        plan = {k: v for k, v in plan.items() if k in only}
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_broker_list)
    try:
        await admin.start()
    except Exception as exc:
        raise ConfigError(f"Kafka brokers {settings.kafka_brokers} unreachable: {exc}") from exc
    try:
        existing = set(await admin.list_topics())
        missing = [
            NewTopic(name, partitions, settings.kafka_replication, topic_configs=config)
            for name, (partitions, config) in plan.items()
            if name not in existing
        ]
        if missing:
            await admin.create_topics(missing)
            log.info("topics_created", topics=[t.name for t in missing])
        counts = _partition_counts(await admin.describe_topics(list(plan)))
    finally:
        await admin.close()
    for name in (settings.kafka_events_topic, f"{settings.kafka_app_id}-state-changelog"):
        expected = settings.kafka_partitions
        if name in plan and counts.get(name, expected) != expected:
            raise ConfigError(
                f"topic {name!r} has {counts[name]} partitions, FOLDMEM_KAFKA_PARTITIONS is "
                f"{settings.kafka_partitions}: set it to {counts[name]} (or recreate the topic)"
            )
    return counts


def _partition_counts(described: list[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for topic in described:
        name = topic.get("topic") if isinstance(topic, dict) else getattr(topic, "topic", None)
        parts = topic.get("partitions") if isinstance(topic, dict) else None
        if name and parts is not None:
            counts[str(name)] = len(parts)
    return counts


class BytesTopic(Protocol):
    """What the writers need from a Faust topic of raw bytes (tests record the sends)."""

    async def send(
        self, *, key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes]]
    ) -> Awaitable[Any]: ...


class IntentTopic:
    """The intents topic as the Kafka deployment's intent sink: ``add`` queues a message,
    ``flush`` returns once the brokers acknowledged everything added (raises otherwise)."""

    name = "kafka:intents"

    def __init__(self, topic: BytesTopic, metrics: WorkerMetrics) -> None:
        self.topic = topic
        self.metrics = metrics
        self._pending: list[Awaitable[Any]] = []

    async def add(self, message: IntentMessage) -> None:
        sent = await self.topic.send(
            key=message.tenant.encode(),
            value=message.model_dump_json().encode(),
            headers=[("message_id", message.message_id.encode())],
        )
        self._pending.append(sent)
        self.metrics.intents_emitted.labels(type=message.type).inc()

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            await asyncio.gather(*pending)

    async def close(self) -> None:
        await self.flush()

    async def publish(self, messages: Sequence[IntentMessage]) -> None:
        """Send the messages and wait until the brokers have them all."""
        for message in messages:
            await self.add(message)
        await self.flush()


class DeadLetterTopic:
    """Where an events-topic message that cannot be folded goes, with the reason."""

    def __init__(self, topic: BytesTopic, metrics: WorkerMetrics) -> None:
        self.topic = topic
        self.metrics = metrics

    async def send(self, message: Any, reason: str) -> None:
        headers = [
            ("reason", reason.encode()),
            ("source_topic", str(message.topic).encode()),
            ("source_partition", str(message.partition).encode()),
            ("source_offset", str(message.offset).encode()),
        ]
        sent = await self.topic.send(key=message.key, value=message.value, headers=headers)
        await sent
        self.metrics.deadletters.inc()
        log.warning(
            "event_deadlettered",
            reason=reason,
            topic=message.topic,
            partition=message.partition,
            offset=message.offset,
        )
