"""The changelog sender without a broker: records reach the producer in the order the state
wrote them, each write learns of its acknowledgement (or refusal), and a fold returns only
once its records are in the producer, which Faust flushes before it commits the offset."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemas.events import RawEvent
from stream_app.factory import build_engine
from stream_app.kafka.app import build_faust_app
from stream_app.kafka.codec import COMMIT, split_key, table_key
from stream_app.kafka.hub import FoldError, KafkaHub
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

    def __init__(self, refuse: bytes | None = None, refuse_all: bool = False) -> None:
        self.got: list[tuple[int | None, bytes]] = []
        self.acks: list[asyncio.Future[str]] = []
        self.refuse = refuse  # the key of a record the producer refuses
        self.refuse_all = refuse_all  # the producer is closed
        self.open = asyncio.Event()  # cleared: the broker stalls, send waits
        self.open.set()
        self.meanwhile: dict[bytes, Callable[[], None]] = {}  # a writer's turn after a send

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
        await self.open.wait()
        if key == self.refuse or self.refuse_all:
            raise RuntimeError("producer buffer full")
        self.got.append((partition, key))
        if key in self.meanwhile:
            asyncio.get_running_loop().call_soon(self.meanwhile.pop(key))
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


def key(tenant: str, n: int) -> bytes:
    return table_key(tenant, "n", str(n))


async def test_a_refused_record_fails_it_and_every_record_queued_after_it() -> None:
    producer = Producer(refuse=key("alice", 1))
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    acked = [sender.send_changelog(0, key("alice", n), b"v") for n in range(4)]
    with pytest.raises(RuntimeError, match="buffer full"):
        await sender.hand_over("alice")
    assert producer.got == [(0, key("alice", 0))]  # the commit marker after it never leaves
    for refused in acked[1:]:
        with pytest.raises(RuntimeError):
            await refused
    producer.ack()
    assert await acked[0] == "acked"


def fold_hub(tmp_path: Path, producer: Producer) -> tuple[KafkaHub, ChangelogSender, RawEvent]:
    """A Kafka hub whose changelog goes to ``producer``, and the sample's first event."""
    settings = Settings(data_dir=tmp_path, embedder="hashing", sweep_interval=0)
    engine = build_engine(settings)
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
    return hub, sender, RawEvent.model_validate_json(line)


async def test_a_fold_returns_once_its_records_and_commit_marker_are_in_the_producer(
    tmp_path: Path,
) -> None:
    producer = Producer()
    hub, _, event = fold_hub(tmp_path, producer)
    async with hub.lock(event.tenant):
        result = await hub.fold_locked(event)
    assert result.status == "folded"
    kinds = [split_key(key)[1] for _, key in producer.got]
    assert kinds.count(COMMIT) == 2 and kinds[-1] == COMMIT  # the ingest's, then the fold's
    handed = len(producer.got)
    await asyncio.sleep(0.01)
    assert len(producer.got) == handed  # nothing was left queued


async def test_records_the_background_drain_failed_stop_their_tenants_next_hand_over() -> None:
    producer = Producer(refuse=key("alice", 0))
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    sender.send_changelog(0, key("alice", 0), b"v")  # the raw event's "stored" transaction
    sender.send_changelog(1, key("bob", 0), b"v")  # another tenant's, on the shared queue
    await asyncio.sleep(0.01)  # the drain fails them; nobody awaits it
    producer.refuse = None
    sender.send_changelog(0, key("alice", 1), b"v")  # the fold's own records then go through
    for tenant in ("alice", "bob"):
        with pytest.raises(RuntimeError, match="buffer full"):
            await sender.hand_over(tenant)
    await sender.hand_over("carol")  # untouched
    sender.resend("alice")  # reloaded
    await sender.hand_over("alice")
    with pytest.raises(RuntimeError):
        await sender.hand_over("bob")  # until it is reloaded too


async def test_a_reloaded_tenants_missed_records_are_sent_again_from_the_table() -> None:
    producer = Producer(refuse_all=True)
    table = Table()
    sender = ChangelogSender(table, TOPIC, lambda: producer)
    transaction = [key("alice", 0), key("alice", 1), key("alice", 0), table_key("alice", "c", "")]
    for n, k in enumerate(transaction):
        table.data[k] = b"v%d" % n  # the state writes the table, then queues the record
        sender.send_changelog(3, k, table.data[k])
    await asyncio.sleep(0.01)  # all refused
    producer.refuse_all = False
    assert sender.resend("alice") == 3
    await sender.hand_over("alice")
    # each key once, with the table's value, the commit marker still last
    assert producer.got == [(3, key("alice", 1)), (3, key("alice", 0)), (3, transaction[3])]


async def test_a_fold_after_the_drain_refused_its_tenants_records_is_not_acknowledged(
    tmp_path: Path,
) -> None:
    producer = Producer(refuse_all=True)
    hub, _, event = fold_hub(tmp_path, producer)
    stored = hub.engine.ingest(hub.state.memory(event.tenant), event).changes
    assert stored is not None
    hub.changelog.write([stored])  # the raw event's "stored" transaction
    await asyncio.sleep(0.01)  # the background drain fails it; nobody awaits it
    producer.refuse_all = False
    async with hub.lock(event.tenant):
        result = await hub.fold_locked(event)  # planned again from its stored node
    assert result.status == "folded"
    markers = [k for _, k in producer.got if split_key(k)[1] == COMMIT]
    assert len(markers) == 2  # the stored transaction, sent again, then the fold's


async def test_a_fold_whose_records_stay_refused_is_dead_lettered_not_acknowledged(
    tmp_path: Path,
) -> None:
    producer = Producer(refuse_all=True)  # the producer is closed
    hub, _, event = fold_hub(tmp_path, producer)
    async with hub.lock(event.tenant):
        with pytest.raises(FoldError, match="changelog write failed"):
            await hub.fold_locked(event)


async def test_a_failed_hand_over_does_not_mask_the_folds_own_error(tmp_path: Path) -> None:
    producer = Producer(refuse_all=True)
    hub, sender, event = fold_hub(tmp_path, producer)
    engine_ingest = hub.engine.ingest

    async def broken_fold(memory: Any, event: RawEvent, on_stored: Any) -> Any:
        stored = engine_ingest(memory, event).changes
        assert stored is not None
        on_stored(stored)  # the raw event is written, then the planner fails
        raise ValueError("planner bug")

    hub.engine.fold = broken_fold  # type: ignore[method-assign,assignment]
    async with hub.lock(event.tenant):
        with pytest.raises(FoldError, match="ValueError: planner bug"):  # dead-lettered
            await hub.fold_locked(event)
    producer.refuse_all = False
    await sender.hand_over(event.tenant)  # reloaded: its stored records were queued again
    assert [k for _, k in producer.got if split_key(k)[1] == COMMIT]


async def test_a_cancelled_hand_over_loses_no_record_of_the_transaction() -> None:
    producer = Producer()
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    transaction = [key("alice", n) for n in (1, 2, 3)]  # the last one: its commit marker
    acked: list[asyncio.Future[Any]] = []

    def write_while_the_first_record_is_sent() -> None:
        producer.open.clear()  # the broker stalls from here on
        acked.extend(sender.send_changelog(0, k, b"v") for k in transaction)

    producer.meanwhile[key("alice", 0)] = write_while_the_first_record_is_sent
    producer.open.clear()
    sender.send_changelog(0, key("alice", 0), b"v")
    fold = asyncio.ensure_future(sender.hand_over("alice"))  # waits behind the drain
    await asyncio.sleep(0.01)
    producer.open.set()  # the first record goes, the transaction is written, the broker stalls
    await asyncio.sleep(0.01)
    fold.cancel()  # the fold is cancelled (a rebalance) while records are being sent
    await asyncio.sleep(0.01)
    producer.open.set()
    await sender.hand_over("alice")
    assert [k for _, k in producer.got] == [key("alice", 0), *transaction]
    producer.ack()
    assert await asyncio.wait_for(asyncio.gather(*acked), 1) == ["acked"] * 3


async def test_writers_wait_while_the_queue_is_above_its_high_water_mark() -> None:
    producer = Producer()
    producer.open.clear()  # a stalled broker
    sender = ChangelogSender(Table(), TOPIC, lambda: producer, high_water=4)
    for n in range(6):
        sender.send_changelog(0, key("alice", n), b"v")
    writer = asyncio.ensure_future(sender.room())
    await asyncio.sleep(0.01)
    assert not writer.done()
    producer.open.set()
    await asyncio.wait_for(writer, 1)


async def test_stopping_hands_the_queue_over_and_refuses_later_records() -> None:
    producer = Producer()
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    for n in range(3):
        sender.send_changelog(0, key("alice", n), b"v")
    await sender.stop()  # before Faust flushes and stops the producer
    assert len(producer.got) == 3
    late = sender.send_changelog(0, key("bob", 0), b"v")
    with pytest.raises(Exception, match="stopped"):
        await late
    with pytest.raises(Exception, match="stopped"):
        await sender.hand_over("bob")


async def test_records_a_stalled_broker_holds_past_the_shutdown_deadline_fail() -> None:
    producer = Producer()
    producer.open.clear()  # the broker stalls
    sender = ChangelogSender(Table(), TOPIC, lambda: producer)
    acked = [sender.send_changelog(0, key("alice", n), b"v") for n in range(2)]
    await sender.stop(timeout=0.05)
    for refused in acked:
        with pytest.raises(Exception, match="interrupted"):
            await refused
    with pytest.raises(Exception, match="interrupted"):
        await sender.hand_over("alice")
