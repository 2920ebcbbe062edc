"""``foldmem run``'s summary line: the fold rate is over the time spent folding, so a run that
follows its sources and waits for new events does not report a rate its folds never had."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from schemas.events import RawEvent
from stream_app.hub import CheckpointFn
from stream_app.ingest.driver import IngestDriver
from stream_app.ingest.sources import Batch, Outcome, Read
from stream_app.ingest.stats import IngestStats


@dataclass(eq=False)
class _PausingBatch(Batch):
    """A source that waits before each of its items after the first, as a followed file
    whose writer appends now and then."""

    pause_s: float = 0.0

    async def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        for index, item in enumerate(self.items):
            if index:
                await asyncio.sleep(self.pause_s)
            yield Read(item, self, f"item {index}", index)


class _SlowTarget:
    name = "test"

    def __init__(self, fold_s: float) -> None:
        self.fold_s = fold_s

    async def start(self) -> None:
        return None

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        await asyncio.sleep(self.fold_s * len(events))
        return ["sent" for _ in events]

    async def close(self) -> None:
        return None


async def test_the_time_spent_folding_leaves_out_the_waits_for_new_events(
    make_event: Callable[..., RawEvent],
) -> None:
    events = [make_event("Dentist at 9"), make_event("Passport photo"), make_event("Run 5k")]
    source = _PausingBatch("followed.jsonl", events, pause_s=0.3)
    driver = IngestDriver(_SlowTarget(fold_s=0.02), deadletter=None)

    stats = await driver.run([source])

    assert stats.seconds >= 0.6
    assert 0.05 <= stats.folding_seconds < 0.3


def test_the_run_line_gives_the_rate_over_the_time_spent_folding() -> None:
    stats = IngestStats(read=157, folded=157, seconds=595.2, folding_seconds=12.5)

    line = stats.run_line()

    assert line.endswith("595.2s (folding 12.5s, 12.6 events/s)")


def test_a_run_that_folded_nothing_gives_no_rate() -> None:
    assert IngestStats(read=2, dead_lettered=2, seconds=1.0).run_line().endswith(", 1.0s")


def test_a_run_that_found_only_duplicates_gives_its_time_and_no_rate() -> None:
    stats = IngestStats(read=18, duplicates=18, seconds=0.2, folding_seconds=0.1)

    assert stats.run_line().endswith(", 0.2s (folding 0.1s)")
