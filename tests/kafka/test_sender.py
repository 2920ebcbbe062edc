"""The changelog sender without a broker: records reach the producer in the order the state
wrote them, each write learns of its acknowledgement (or refusal), and a fold returns only
once its records are in the producer, which Faust flushes before it commits the offset."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from schemas.events import RawEvent
from stream_app.factory import build_engine
from stream_app.kafka.app import build_faust_app
from stream_app.kafka.codec import COMMIT, split_key
from stream_app.kafka.hub import KafkaHub
from stream_app.kafka.metrics import WorkerMetrics
from stream_app.kafka.routing import Ownership
from stream_app.kafka.sender import ChangelogSender
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import IntentTopic
from stream_app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_stream.jsonl"
TOPIC = "foldmem-state-changelog"


class Producer:
    """Faust's producer as the sender sees it: every other send makes the caller wait a turn
    (aiokafka does when a batch is full), acknowledgements come when ``ack`` says so."""

    def __init__(self, refuse: bytes | None = None) -> None:
        self.got: list[tuple[int | None, bytes]] = []
        self.acks: list[asyncio.Future[str]] = []
        self.refuse = refuse  # the key of a record the producer refuses

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: float | None,
        headers: Any,
    ) -> asyncio.Future[str]:
        assert topic == TOPIC and key is not None
        if len(self.got) % 2:
            await asyncio.sleep(0)
        if key == self.refuse:
            raise RuntimeError("producer buffer full")
        self.got.append((partition, key))
        acked: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.acks.append(acked)
        return acked

    def ack(self) -> None:
        for acked in self.acks:
            if not acked.done():
                acked.set_result("acked")


class Table:
    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}


async def test_records_reach_the_producer_in_the_order_they_were_written() -> None:
    producer = Producer()
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    written = []
    for n in range(5):  # two writers, each queuing while the other's records are handed over
        for tenant, partition in ((b"alice", 0), (b"bob", 1)):
            key = tenant + b"/%d" % n
            sender.send_changelog(partition, key, b"v")
            written.append((partition, key))
        await asyncio.sleep(0)
    await sender.hand_over()
    assert producer.got == written


async def test_a_write_learns_when_the_brokers_acknowledged_its_records() -> None:
    producer = Producer()
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    acked = [sender.send_changelog(0, b"alice/%d" % n, b"v") for n in range(3)]
    await sender.hand_over()
    assert not any(a.done() for a in acked)  # in the producer, not yet on the brokers
    producer.ack()
    assert await asyncio.gather(*acked) == ["acked"] * 3


async def test_a_refused_record_fails_it_and_every_record_queued_after_it() -> None:
    producer = Producer(refuse=b"alice/1")
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    acked = [sender.send_changelog(0, b"alice/%d" % n, b"v") for n in range(4)]
    with pytest.raises(RuntimeError, match="buffer full"):
        await sender.hand_over()
    assert producer.got == [(0, b"alice/0")]  # the commit marker after it never leaves
    for refused in acked[1:]:
        with pytest.raises(RuntimeError):
            await refused
    producer.ack()
    assert await acked[0] == "acked"


async def test_a_fold_returns_once_its_records_and_commit_marker_are_in_the_producer(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, embedder="hashing", sweep_interval=0)
    engine = build_engine(settings)
    producer = Producer()
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    state = KafkaTenantState(sender, engine.embedder.dim, lambda _t: 0)

    class Intents:
        async def send(self, *, key: Any, value: Any, headers: Any) -> asyncio.Future[None]:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

    metrics = WorkerMetrics()
    app = build_faust_app(settings, "http://127.0.0.1:8765")
    ownership = Ownership(app.app, settings.kafka_events_topic, app.changelog_topic, 8)
    hub = KafkaHub(engine, state, ownership, IntentTopic(Intents(), metrics), metrics)
    line = next(x for x in SAMPLE.read_text().splitlines() if x.strip())
    event = RawEvent.model_validate_json(line)
    async with hub.lock(event.tenant):
        result = await hub.fold_locked(event)
    assert result.status == "folded"
    kinds = [split_key(key)[1] for _, key in producer.got]
    assert kinds.count(COMMIT) == 2 and kinds[-1] == COMMIT  # the ingest's, then the fold's
    handed = len(producer.got)
    await asyncio.sleep(0.01)
    assert len(producer.got) == handed  # nothing was left queued
