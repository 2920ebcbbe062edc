"""After a worker replays its changelog, the events partitions are read from their committed
offsets only: nothing is fetched for them until they are seeked, and a partition without a
committed offset is read from its start (stream_app/kafka/recovery.py).
"""

from __future__ import annotations

from pathlib import Path
from time import monotonic
from types import SimpleNamespace
from typing import Any, cast

import pytest
from aiokafka import TopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.consumer.subscription_state import SubscriptionState
from faust.types import TP
from structlog.testing import capture_logs

from stream_app.kafka.app import build_faust_app
from stream_app.settings import load_settings

EVENTS = "foldmem.events"


class RecordingConsumer:
    """The calls Faust's recovery makes on the consumer, each with whether the consumer's flow
    (fetching and handing records to the agents) was on at that moment."""

    def __init__(self) -> None:
        self.flow_active = True
        self.calls: list[tuple[str, bool]] = []

    def assignment(self) -> set[TP]:
        return {TP(EVENTS, 0), TP(EVENTS, 1)}

    def stop_flow(self) -> None:
        self.flow_active = False

    def resume_flow(self) -> None:
        self.flow_active = True
        self.calls.append(("resume_flow", self.flow_active))

    def resume_partitions(self, tps: Any) -> None:
        self.calls.append(("resume_partitions", self.flow_active))

    async def perform_seek(self) -> None:
        self.calls.append(("perform_seek", self.flow_active))


class IdleFetcher:
    async def maybe_start(self) -> None:
        return None


def recovery_with(consumer: RecordingConsumer, tmp_path: Path) -> Any:
    """A worker's Faust recovery service, its consumer and fetcher replaced."""
    settings = load_settings(data_dir=tmp_path, kafka_events_topic=EVENTS)
    app = build_faust_app(settings, "http://127.0.0.1:8765").app
    app.consumer = cast(Any, consumer)
    app.__dict__["_fetcher"] = IdleFetcher()
    return cast(Any, app.tables).recovery


async def test_events_partitions_are_not_fetched_before_they_are_seeked_to_committed_offsets(
    tmp_path: Path,
) -> None:
    consumer = RecordingConsumer()
    recovery = recovery_with(consumer, tmp_path)

    await recovery.on_recovery_completed(generation_id=recovery.app.consumer_generation_id)

    # the flow was on during the changelog replay; from the moment the events partitions are
    # resumed until the seek is done, nothing may be fetched or handed to the fold agent
    assert [name for name, _ in consumer.calls] == [
        "resume_partitions",
        "perform_seek",
        "resume_flow",
    ]
    assert consumer.calls[0] == ("resume_partitions", False)
    assert consumer.calls[1] == ("perform_seek", False)
    assert consumer.flow_active


class CommittedOffsets:
    """The consumer's thread (where aiokafka runs) with the group's committed offsets and each
    partition's first offset (None: the broker gives none, as an old message format): it
    answers the seek to the committed ones, and records where each partition was seeked to."""

    def __init__(
        self, committed: dict[TopicPartition, int | None], first: dict[TopicPartition, int | None]
    ) -> None:
        self.committed = committed
        self.first = first
        self.seeked: dict[TopicPartition, int] = {}
        self.to_beginning: list[TopicPartition] = []

    async def seek_to_committed(self) -> dict[TopicPartition, int | None]:
        return self.committed

    async def earliest_offsets(self, *partitions: TopicPartition) -> dict[TopicPartition, Any]:
        return {tp: self.first[tp] for tp in partitions}

    async def seek_wait(self, partitions: dict[TopicPartition, int]) -> None:
        self.seeked.update(partitions)

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        self.to_beginning.extend(partitions)


async def test_an_events_partition_never_committed_is_read_from_its_start_after_a_recovery(
    tmp_path: Path,
) -> None:
    """A worker killed before its first offset commit leaves no committed offset: the next
    owner's fetcher may have read ahead while the changelog was replayed, and the seek must
    take such a partition back to its start, or the events read ahead are never folded. It
    seeks to the first offset itself (a retention may have removed offset 0), so that the
    partition has a position at once (see the next test); without one from the broker, to
    the beginning."""
    settings = load_settings(data_dir=tmp_path, kafka_events_topic=EVENTS)
    faust_app = build_faust_app(settings, "http://127.0.0.1:8765")
    app = cast(Any, faust_app.app)
    never, zero, ahead, old = (TopicPartition(EVENTS, p) for p in range(4))
    changelog = TopicPartition(faust_app.changelog_topic, 0)
    thread = CommittedOffsets(
        {never: None, zero: 0, ahead: 42, old: None, changelog: None},
        {never: 7, zero: 0, ahead: 0, old: None},
    )
    app.consumer._thread = thread

    await app.consumer.perform_seek()  # what the recovery calls once the changelog is replayed

    # the changelog's offsets are the recovery's; a committed partition keeps its offset
    assert thread.seeked == {never: 7, zero: 0}
    assert thread.to_beginning == [old]
    assert app.consumer._read_offset[never] is None  # any offset of theirs is read again


def fetched(tps: list[TopicPartition], now: float) -> SubscriptionState:
    """A real aiokafka subscription whose partitions were fetched just now at offset 0 (a
    highwater is known)."""
    subscriptions = SubscriptionState()
    subscriptions.assign_from_user(tps)
    for tp in tps:
        state = subscriptions.subscription.assignment.state_value(tp)
        state.seek(0)
        state.highwater = 10
        state.timestamp = now * 1000  # the last fetch, in milliseconds
    return subscriptions


async def test_the_livelock_check_skips_a_partition_whose_offset_is_being_reset(
    tmp_path: Path,
) -> None:
    """Faust checks every few seconds that each partition is fetched and processed, reading
    its position, which aiokafka asserts is set. While a partition's offset is being reset it
    has none: the check raised AssertionError and crashed the worker (the kill -9 test, after
    a seek to the beginning). The worker's consumer skips such a partition."""
    settings = load_settings(data_dir=tmp_path, kafka_events_topic=EVENTS)
    app = cast(Any, build_faust_app(settings, "http://127.0.0.1:8765").app)
    steady, resetting = TopicPartition(EVENTS, 0), TopicPartition(EVENTS, 1)
    now = monotonic()
    subscriptions = fetched([steady, resetting], now)
    subscriptions.subscription.assignment.state_value(resetting).await_reset(
        OffsetResetStrategy.EARLIEST
    )
    thread = app.consumer._thread  # Faust's own, over that subscription
    thread._consumer = SimpleNamespace(_fetcher=SimpleNamespace(_subscriptions=subscriptions))
    thread.time_started = now
    with pytest.raises(AssertionError):  # Faust's check as it stands
        thread.verify_event_path(now, TP(EVENTS, 1))

    with capture_logs() as logs:
        for tp in (steady, resetting):
            app.consumer.verify_event_path(now, TP(tp.topic, tp.partition))
        # a reset that starts after the look (aiokafka's thread) is logged, not raised
        app.consumer._resetting = lambda tp: False
        app.consumer.verify_event_path(now, TP(EVENTS, 1))

    assert [entry["event"] for entry in logs] == ["livelock_check_skipped"]
