"""After a worker replays its changelog, the events partitions are read from their committed
offsets only: nothing is fetched for them until they are seeked (stream_app/kafka/recovery.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

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
