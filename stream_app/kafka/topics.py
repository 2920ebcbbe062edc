"""Create foldmem's topics before anything subscribes or produces, and check partition counts.

Brokers that auto-create topics (Kafka with auto.create.topics.enable, tansu) would otherwise
create ``foldmem.events`` with their default partition count on the first metadata request;
the worker derives a tenant's partition (and so where its state lives) from the configured
count, so a mismatch is refused with a ConfigError instead of folding on wrong partitions.
"""

from __future__ import annotations

from typing import Any

import structlog

from schemas.errors import ConfigError
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


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
