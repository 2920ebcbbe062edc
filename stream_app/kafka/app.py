"""The Faust app of a worker, from Settings: its topics (raw bytes: foldmem encodes and
validates them itself) and the state table. Nothing is started here (``faust.Worker`` or a
test's ``test_context`` does that)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faust

from stream_app.kafka.recovery import RewindingTransport, SeekedTableManager
from stream_app.settings import Settings

STATE_TABLE = "state"


@dataclass(frozen=True)
class FaustApp:
    app: faust.App
    events: Any  # faust topics of raw bytes
    intents: Any
    deadletter: Any
    table: Any  # the state table (its changelog: ``changelog_topic``)
    changelog_topic: str


def faust_datadir(settings: Settings) -> Path:
    """Faust's own local files (table metadata) live in the data dir, per app id."""
    return settings.data_dir / "faust" / settings.kafka_app_id


def broker_urls(brokers: Sequence[str]) -> list[str]:
    return [b if "://" in b else f"kafka://{b}" for b in brokers]


def bytes_topic(app: faust.App, name: str, partitions: int) -> Any:
    return app.topic(
        name,
        partitions=partitions,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
    )


def build_faust_app(settings: Settings, url: str) -> FaustApp:
    """The app, its three topics and the state table; ``url`` is this worker's API (the
    canonical URL other workers forward requests to)."""
    timeout = settings.kafka_session_timeout
    partitions = settings.kafka_partitions
    faust_datadir(settings).parent.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        settings.kafka_app_id,
        broker=broker_urls(settings.kafka_broker_list),
        store="memory://",
        datadir=str(faust_datadir(settings)),  # under the data dir, not the CWD
        autodiscover=False,
        web_enabled=False,
        canonical_url=url,
        topic_partitions=partitions,
        topic_replication_factor=settings.kafka_replication,
        key_serializer="raw",
        value_serializer="raw",
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=timeout,
        broker_heartbeat_interval=max(0.5, timeout / 5),
        broker_rebalance_timeout=max(timeout, 10.0),
        broker_commit_interval=1.0,
        table_standby_replicas=settings.kafka_standby_replicas,
        producer_max_batch_size=4 * 1024 * 1024,
        producer_max_request_size=8 * 1024 * 1024,
        producer_linger=0.005,
        # events are read from their committed offsets after a recovery (kafka/recovery.py)
        TableManager=SeekedTableManager,
    )
    # stream partitions without a committed offset are read from their start after a
    # recovery (kafka/recovery.py); set before anything asks the app for its transport
    app.transport = RewindingTransport(app.conf.broker_consumer, app)
    return FaustApp(
        app=app,
        events=bytes_topic(app, settings.kafka_events_topic, partitions),
        intents=bytes_topic(app, settings.kafka_intents_topic, partitions),
        deadletter=bytes_topic(app, settings.kafka_deadletter_topic, 1),
        table=app.Table(STATE_TABLE, partitions=partitions, key_type=bytes, value_type=bytes),
        changelog_topic=f"{settings.kafka_app_id}-{STATE_TABLE}-changelog",
    )
