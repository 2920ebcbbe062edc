"""Where a fold's time goes: the seconds each step of a fold spends on the fold's thread.

A fold result carries its steps' times (``FoldResult.steps``), a batch the sum of its folds'
and its own (``BatchResult.steps``). The throughput benchmark reads them as its budget table
(what each step costs per event, and the rate the fold would reach were that step free); a
Kafka worker exports them (``foldmem_fold_step_seconds_total``). Work done beside the fold's
thread (a model embedding the next slice, the reader process parsing the next batch) is not
in them: it is what they do not wait for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# in the order a fold runs them; every step a fold times is one of these
FOLD_STEPS = (
    "embed",  # the batch's texts embedded in one call (what the fold's thread waits for)
    "read",  # the batch's texts parsed in one spaCy call (what was not read ahead)
    "ingest",  # the raw event stored as its EVENT node
    "context",  # context assembly (kNN, expansion, PageRank, tiers)
    "plan",  # the planner
    "apply",  # the plan validated and applied (with the context's access counts)
    "facts",  # the fact step (statements, reconciliation)
    "consolidate",  # reinforce, merge, split, kNN completion
    "emerge",  # intent emergence (clusters measured, intents made, moved, retitled)
)


@dataclass(slots=True)
class StepTimes:
    """Seconds per step (``FOLD_STEPS``), summed over what was timed."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, step: str, seconds: float) -> None:
        self.seconds[step] = self.seconds.get(step, 0.0) + seconds

    def merge(self, other: StepTimes) -> None:
        for step, seconds in other.seconds.items():
            self.add(step, seconds)

    @contextmanager
    def timing(self, step: str) -> Iterator[None]:
        """Time the block as ``step`` (also when it raises: the time was spent)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(step, time.perf_counter() - started)

    def laps(self) -> Laps:
        """A stopwatch whose each call times what ran since the last as the step it names."""
        return Laps(self)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


class Laps:
    """Consecutive steps timed end to end: ``lap("facts")`` adds the time since the previous
    lap (or the start) to "facts", so nothing between two steps goes untimed."""

    __slots__ = ("_last", "_times")

    def __init__(self, times: StepTimes) -> None:
        self._times = times
        self._last = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        self._times.add(step, now - self._last)
        self._last = now
