"""After a worker replays its changelog, the events partitions are read from their committed
offsets only: nothing is fetched for them until they are seeked, and a partition without a
committed offset is read from its start (stream_app/kafka/recovery.py).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from aiokafka import TopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.consumer.subscription_state import SubscriptionState
from faust.types import TP

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
    partition's first offset: it answers the seek to the committed ones, and records where
    each partition was seeked to."""

    def __init__(
        self, committed: dict[TopicPartition, int | None], first: dict[TopicPartition, int]
    ) -> None:
        self.committed = committed
        self.first = first
        self.seeked: dict[TopicPartition, int] = {}

    async def seek_to_committed(self) -> dict[TopicPartition, int | None]:
        return self.committed

    async def earliest_offsets(self, *partitions: TopicPartition) -> dict[TopicPartition, int]:
        return {tp: self.first[tp] for tp in partitions}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeked[tp] = offset


async def test_an_events_partition_never_committed_is_read_from_its_start_after_a_recovery(
    tmp_path: Path,
) -> None:
    """A worker killed before its first offset commit leaves no committed offset: the next
    owner's fetcher may have read ahead while the changelog was replayed, and the seek must
    take such a partition back to its start, or the events read ahead are never folded. It
    seeks to the first offset itself (a retention may have removed offset 0), so that the
    partition has a position at once (see the next test)."""
    settings = load_settings(data_dir=tmp_path, kafka_events_topic=EVENTS)
    faust_app = build_faust_app(settings, "http://127.0.0.1:8765")
    app = cast(Any, faust_app.app)
    never, zero, ahead = (TopicPartition(EVENTS, p) for p in range(3))
    changelog = TopicPartition(faust_app.changelog_topic, 0)
    thread = CommittedOffsets(
        {never: None, zero: 0, ahead: 42, changelog: None}, {never: 7, zero: 0, ahead: 0}
    )
    app.consumer._thread = thread

    await app.consumer.perform_seek()  # what the recovery calls once the changelog is replayed

    # the changelog's offsets are the recovery's; a committed partition keeps its offset
    assert thread.seeked == {never: 7, zero: 0}
    assert app.consumer._read_offset[never] is None  # any offset of theirs is read again


class ResettingThread:
    """The consumer's thread over a real aiokafka subscription whose partitions have been
    fetched (a highwater is known), one of them now waiting for aiokafka to reset its offset
    (no position until the broker answers)."""

    def __init__(self, tps: list[TopicPartition], resetting: TopicPartition) -> None:
        self._fetcher = SimpleNamespace(_subscriptions=SubscriptionState())
        self._fetcher._subscriptions.assign_from_user(tps)
        assignment = self._fetcher._subscriptions.subscription.assignment
        for tp in tps:
            state = assignment.state_value(tp)
            state.seek(0)
            state.highwater = 10
        assignment.state_value(resetting).await_reset(OffsetResetStrategy.EARLIEST)
        self.checked: dict[TopicPartition, int] = {}

    def _ensure_consumer(self) -> Any:
        return self

    def verify_event_path(self, now: float, tp: TP) -> None:
        # Faust's check reads the position of the partition it verifies
        state = self._fetcher._subscriptions.subscription.assignment.state_value(tp)
        self.checked[tp] = state.position


async def test_the_livelock_check_skips_a_partition_whose_offset_is_being_reset(
    tmp_path: Path,
) -> None:
    """Faust checks every few seconds that each partition is fetched and processed, reading
    its position, which aiokafka asserts is set. While a partition's offset is being reset it
    has none: the check raised AssertionError and crashed the worker (the kill -9 test, after
    a seek to the beginning). Such a partition is skipped; the others are still checked."""
    settings = load_settings(data_dir=tmp_path, kafka_events_topic=EVENTS)
    app = cast(Any, build_faust_app(settings, "http://127.0.0.1:8765").app)
    steady, resetting = TopicPartition(EVENTS, 0), TopicPartition(EVENTS, 1)
    thread = ResettingThread([steady, resetting], resetting)
    app.consumer._thread = thread

    for tp in (steady, resetting):
        app.consumer.verify_event_path(0.0, TP(tp.topic, tp.partition))

    assert thread.checked == {steady: 0}
