"""The consumer lag a worker reports on /metrics, before and after its first fetch."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from faust.types import TP

from stream_app.kafka.worker import KafkaWorker

EVENTS = "foldmem.events"


def worker_with(highwaters: dict[int, int | None], read: dict[int, int]) -> Any:
    """A worker's app as ``_lag`` reads it: assigned partitions, their ends, offsets read."""
    consumer = SimpleNamespace(
        assignment=lambda: {TP(EVENTS, p) for p in highwaters} | {TP("other", 0)},
        highwater=lambda tp: highwaters[tp.partition],
    )
    monitor = SimpleNamespace(tp_read_offsets={TP(EVENTS, p): o for p, o in read.items()})
    return SimpleNamespace(
        app=SimpleNamespace(consumer=consumer, monitor=monitor),
        settings=SimpleNamespace(kafka_events_topic=EVENTS),
    )


def test_a_partition_not_fetched_yet_is_left_out_of_the_lag_instead_of_failing_metrics() -> None:
    worker = worker_with({0: 30, 1: None}, read={0: 9})
    assert list(KafkaWorker._lag(worker)) == [(EVENTS, 0, 20)]
