"""The Kafka fold agent without a broker: the worker's own Faust app, its agent driven through
Faust's ``test_context``; the changelog, intents and dead-letter sends are recorded.

An event folds (its records on its tenant's changelog partition, commit marker last); an
invalid record goes to the dead-letter topic with the reason; a duplicate is a no-op; a worker
that crashed before the fold's commit marker reached the changelog is replaced by one that
folds the redelivered message again, to the state an uninterrupted run reaches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from schemas.events import RawEvent
from schemas.intents import IntentMessage
from stream_app.factory import build_engine
from stream_app.hub import Hub
from stream_app.ingest.admission import Admission
from stream_app.kafka import agent
from stream_app.kafka.app import build_faust_app
from stream_app.kafka.codec import COMMIT, memory_items, split_key
from stream_app.kafka.hub import KafkaHub
from stream_app.kafka.metrics import WorkerMetrics
from stream_app.kafka.routing import Ownership
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import DeadLetterTopic, IntentTopic, partition_for
from stream_app.settings import Settings
from topologies.engine import FoldEngine, FoldResult

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_stream.jsonl"
PARTITIONS = 4
Sent = tuple[int | None, bytes, bytes | None]


class RecordingTable:
    """The state table: values by key, and every changelog send in order."""

    def __init__(self, sent: list[Sent] | None = None) -> None:
        self.data: dict[bytes, bytes] = {}
        self.sent: list[Sent] = []
        for _, key, value in sent or []:  # a recovery: the last value per key
            if value is None:
                self.data.pop(key, None)
            else:
                self.data[key] = value

    def send_changelog(self, partition: int | None, key: Any, value: Any) -> None:
        self.sent.append((partition, key, value))


class RecordingTopic:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes | None, bytes | None, dict[str, bytes]]] = []

    async def send(
        self, *, key: bytes | None, value: bytes | None, headers: Any
    ) -> asyncio.Future[None]:
        self.sent.append((key, value, dict(headers)))
        acked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        acked.set_result(None)
        return acked


@dataclass
class Worker:
    """A worker's parts as ``KafkaWorker`` wires them, over recording fakes of Kafka."""

    table: RecordingTable
    intents: RecordingTopic
    deadletter: RecordingTopic
    hub: KafkaHub
    agent: Any  # the Faust agent
    fold: agent.FoldAgent

    def intent_messages(self) -> list[IntentMessage]:
        return [
            IntentMessage.model_validate_json(value or b"") for _, value, _ in self.intents.sent
        ]


def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path, embedder="hashing", kafka_partitions=PARTITIONS, sweep_interval=0
    )


def worker(tmp_path: Path, engine: FoldEngine, changelog: list[Sent] | None = None) -> Worker:
    config = settings(tmp_path)
    app = build_faust_app(config, "http://127.0.0.1:8765")
    ownership = Ownership(app.app, config.kafka_events_topic, app.changelog_topic, PARTITIONS)
    table = RecordingTable(changelog)
    state = KafkaTenantState(table, engine.embedder.dim, ownership.tenant_partition)
    metrics = WorkerMetrics()
    intents, deadletter = RecordingTopic(), RecordingTopic()
    hub = KafkaHub(engine, state, ownership, IntentTopic(intents, metrics), metrics)
    fold = agent.FoldAgent(
        hub, DeadLetterTopic(deadletter, metrics), Admission(), ownership.tenant_partition
    )
    faust_agent = agent.register(app.app, app.events, fold, concurrency=1)
    return Worker(table, intents, deadletter, hub, faust_agent, fold)


@pytest.fixture
def engine(tmp_path: Path) -> FoldEngine:
    return build_engine(settings(tmp_path))


def sample(n: int) -> list[RawEvent]:
    lines = [line for line in SAMPLE.read_text().splitlines() if line.strip()]
    return [RawEvent.model_validate_json(line) for line in lines[:n]]


async def put(tested: Any, event: RawEvent, *, value: bytes | None = None) -> Any:
    """As the events topic delivers it: key = tenant, on the tenant's partition."""
    arrived = event.ts + timedelta(minutes=5)
    await tested.put(
        value=event.model_dump_json().encode() if value is None else value,
        key=event.tenant.encode(),
        partition=partition_for(event.tenant, PARTITIONS),
        timestamp=arrived.timestamp(),
    )
    return tested.results[tested.processed_offset - 1]


@pytest.fixture
async def running(tmp_path: Path, engine: FoldEngine) -> AsyncIterator[tuple[Worker, Any]]:
    parts = worker(tmp_path, engine)
    async with parts.agent.test_context() as tested:
        yield parts, tested


def markers(sent: list[Sent]) -> list[int]:
    return [i for i, (_, key, _) in enumerate(sent) if split_key(key)[1] == COMMIT]


async def test_an_event_folds_into_its_tenants_changelog_partition(
    running: tuple[Worker, Any],
) -> None:
    parts, tested = running
    assert isinstance(parts.hub, Hub)  # the contract the API takes
    event = sample(1)[0]
    result = await put(tested, event)
    assert isinstance(result, FoldResult) and result.status == "folded"
    memory = parts.hub.state.get(event.tenant)
    assert memory is not None and memory.event_state(event.id) == "folded"
    sent = parts.table.sent
    assert {p for p, _, _ in sent} == {partition_for(event.tenant, PARTITIONS)}
    assert len(markers(sent)) == 2 and markers(sent)[-1] == len(sent) - 1  # ingest, then fold
    # the received time is the broker's timestamp, not this machine's clock
    node = memory.graph.node(result.node_id)
    assert node.created_at == event.ts + timedelta(minutes=5)
    # a worker that recovers the changelog has the same memory
    recovered = KafkaTenantState(RecordingTable(sent), memory.dim, lambda t: 0)
    again = recovered.get(event.tenant)
    assert again is not None and memory_items(again) == memory_items(memory)
    assert parts.deadletter.sent == []


@pytest.mark.parametrize(
    ("value", "key", "reason"),
    [
        (b"{not json", b"alice", "invalid RawEvent"),
        (None, b"bob", "is not the event's tenant"),
        (b'{"id": "x", "tenant": "alice", "source": "note"}', b"alice", "ts: Field required"),
    ],
    ids=["not-json", "wrong-key", "missing-field"],
)
async def test_an_invalid_record_goes_to_the_dead_letter_topic_with_the_reason(
    running: tuple[Worker, Any], value: bytes | None, key: bytes, reason: str
) -> None:
    parts, tested = running
    event = sample(1)[0]
    raw = event.model_dump_json().encode() if value is None else value
    await tested.put(
        value=raw, key=key, partition=partition_for("alice", PARTITIONS), timestamp=1.0
    )
    assert tested.results[0] is None
    [(dead_key, dead_value, headers)] = parts.deadletter.sent
    assert (dead_key, dead_value) == (key, raw)  # the original bytes
    assert reason in headers["reason"].decode()
    assert headers["source_topic"] == b"foldmem.events"
    assert parts.table.sent == [] and parts.intents.sent == []


async def test_a_record_on_the_wrong_partition_or_too_far_ahead_is_dead_lettered(
    running: tuple[Worker, Any],
) -> None:
    parts, tested = running
    event = sample(1)[0]
    right = partition_for(event.tenant, PARTITIONS)
    raw = event.model_dump_json().encode()
    await tested.put(value=raw, key=b"alice", partition=(right + 1) % PARTITIONS, timestamp=1.0)
    future = event.model_copy(update={"id": "future", "ts": datetime(2999, 1, 1, tzinfo=UTC)})
    await tested.put(
        value=future.model_dump_json().encode(),
        key=b"alice",
        partition=right,
        timestamp=datetime(2026, 11, 2, tzinfo=UTC).timestamp(),
    )
    reasons = [headers["reason"].decode() for _, _, headers in parts.deadletter.sent]
    assert f"belongs to partition {right}" in reasons[0]
    assert "in the future" in reasons[1] and reasons[1].startswith("ts:")
    assert parts.table.sent == []


async def test_a_duplicate_is_a_no_op(running: tuple[Worker, Any]) -> None:
    parts, tested = running
    events = sample(3)
    for event in events:
        await put(tested, event)
    records, published = len(parts.table.sent), len(parts.intents.sent)
    again = await put(tested, events[1])
    assert again.status == "duplicate"
    assert len(parts.table.sent) == records  # nothing written
    assert len(parts.intents.sent) == published  # nothing published
    assert parts.deadletter.sent == []


async def test_a_crash_before_the_changelog_commit_refolds_the_event(
    tmp_path: Path, engine: FoldEngine
) -> None:
    events = sample(40)
    # an uninterrupted worker, up to the first event that emits an intent
    reference = worker(tmp_path / "reference", engine)
    async with reference.agent.test_context() as tested:
        for event in events:
            result = await put(tested, event)
            if result.messages:
                break
        else:
            pytest.fail("the first 40 sample events emit no intent")
    crash_at = events.index(event)
    tenant = events[crash_at].tenant
    expected = reference.hub.state.get(tenant)
    assert expected is not None
    emitted = {m.message_id for m in result.messages}

    # a worker that dies while that event's fold transaction is on its way: the intents were
    # confirmed, the ingest transaction is on the changelog, the fold's marker is not
    crashed = worker(tmp_path / "crashed", build_engine(settings(tmp_path / "crashed")))
    async with crashed.agent.test_context() as tested:
        for event in events[: crash_at + 1]:
            await put(tested, event)
    sent = crashed.table.sent
    ingest_marker, fold_marker = markers(sent)[-2:]
    assert fold_marker - ingest_marker > 2
    survived = sent[: ingest_marker + 2]  # the fold's first record only
    assert emitted <= {m.message_id for m in crashed.intent_messages()}

    # the replacement recovers (the half transaction rolled back) and gets the message again
    # (its offset was never committed): the event is folded, not taken for a duplicate
    replacement = worker(tmp_path / "new", build_engine(settings(tmp_path / "new")), survived)
    recovered = replacement.hub.state.memory(tenant)
    assert replacement.hub.state.rolled_back >= 1
    assert recovered.event_state(events[crash_at].id) == "stored"
    async with replacement.agent.test_context() as tested:
        again = await put(tested, events[crash_at])
    assert again.status == "folded"
    assert memory_items(recovered) == memory_items(expected)
    # its intents are published again with the same message ids (consumers dedup on them)
    assert {m.message_id for m in replacement.intent_messages()} == emitted


@dataclass
class Message:
    """An events-topic record as the agent reads it."""

    value: bytes
    key: bytes
    partition: int
    timestamp: float


def message_of(event: RawEvent) -> Message:
    arrived = event.ts + timedelta(minutes=5)
    return Message(
        event.model_dump_json().encode(),
        event.tenant.encode(),
        partition_for(event.tenant, PARTITIONS),
        arrived.timestamp(),
    )


async def test_a_batch_of_messages_folds_as_one_at_a_time_with_fewer_changelog_records(
    tmp_path: Path,
) -> None:
    alice = sample(16)
    bob = [e.model_copy(update={"tenant": "bob"}) for e in alice[:6]]
    messages = [message_of(e) for e in [*alice[:6], *bob, *alice[6:]]]  # tenants interleaved
    one = worker(tmp_path / "one", build_engine(settings(tmp_path / "one")))
    batched = worker(tmp_path / "batched", build_engine(settings(tmp_path / "batched")))
    for message in messages:
        assert isinstance(await one.fold.handle(message), FoldResult)
    outcomes = await batched.fold.handle_batch(messages)
    assert all(isinstance(o, FoldResult) and o.status == "folded" for o in outcomes)
    for tenant in ("alice", "bob"):
        expected, memory = one.hub.state.get(tenant), batched.hub.state.get(tenant)
        assert expected is not None and memory is not None
        assert memory_items(memory) == memory_items(expected)
        recovered = KafkaTenantState(RecordingTable(batched.table.sent), memory.dim, lambda t: 0)
        again = recovered.get(tenant)
        assert again is not None and memory_items(again) == memory_items(memory)
    # one changelog transaction per tenant: its commit marker, sent once more when sealed
    assert len(markers(batched.table.sent)) == 4
    assert len(batched.table.sent) < len(one.table.sent) / 2
    assert len(batched.intents.sent) == len(one.intents.sent)
