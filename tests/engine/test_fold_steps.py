"""Where a fold's time goes: each fold and each batch says what its steps cost."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from tests.engine.test_fold_batch import heuristic_engine, sample_events
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder, Matrix
from topologies.engine import FoldEngine
from topologies.fold_steps import FOLD_STEPS, StepTimes
from topologies.heuristic_planner import HeuristicPlanner

STEPS_OF_A_FOLD = {"ingest", "context", "plan", "apply", "facts", "consolidate", "emerge"}


async def test_every_fold_of_a_batch_times_each_of_its_steps() -> None:
    engine = heuristic_engine(HashingEmbedder(dim=64))
    memory = engine.new_memory("alice")

    batch = await engine.fold_batch(memory, sample_events(12))

    for result in batch.results:
        assert result.status == "folded"
        assert set(result.steps.seconds) == STEPS_OF_A_FOLD
        assert all(seconds > 0.0 for seconds in result.steps.seconds.values())
        assert result.steps.total - result.steps.seconds["ingest"] <= result.fold_seconds


async def test_a_batch_sums_its_folds_steps_and_adds_its_own() -> None:
    engine = heuristic_engine(HashingEmbedder(dim=64))
    memory = engine.new_memory("alice")

    started = time.perf_counter()
    batch = await engine.fold_batch(memory, sample_events(12))
    wall = time.perf_counter() - started

    assert set(batch.steps.seconds) == set(FOLD_STEPS)  # the batch embeds and reads too
    for step in STEPS_OF_A_FOLD:
        folds = sum(result.steps.seconds[step] for result in batch.results)
        assert abs(batch.steps.seconds[step] - folds) < 1e-9
    assert batch.steps.total <= wall


async def test_a_single_event_fold_times_its_embedding_and_ingest() -> None:
    engine = heuristic_engine(HashingEmbedder(dim=64))
    memory = engine.new_memory("alice")

    result = await engine.fold(memory, sample_events(1)[0])

    assert set(result.steps.seconds) == {"embed", *STEPS_OF_A_FOLD}


async def test_a_batch_of_one_event_says_where_its_time_went() -> None:
    engine = heuristic_engine(HashingEmbedder(dim=64))
    memory = engine.new_memory("alice")

    batch = await engine.fold_batch(memory, sample_events(1))

    assert set(batch.steps.seconds) == {"embed", *STEPS_OF_A_FOLD}
    assert batch.steps.seconds == batch.results[0].steps.seconds


def test_laps_time_consecutive_steps_end_to_end() -> None:
    times = StepTimes()
    lap = times.laps()
    time.sleep(0.02)
    lap("facts")
    lap("emerge")
    time.sleep(0.01)
    lap("facts")

    assert times.seconds["facts"] >= 0.03
    assert times.seconds["emerge"] < 0.01


def test_a_step_that_raises_still_counts_its_time() -> None:
    times = StepTimes()
    try:
        with times.timing("plan"):
            time.sleep(0.01)
            raise RuntimeError("planner down")
    except RuntimeError:
        pass

    assert times.seconds["plan"] >= 0.01


class SlowAheadEmbedder(HashingEmbedder):
    """Embeds the texts asked for outside the fold's thread (the next batch's) slowly, as a
    model on a busy core does."""

    def __init__(self, fold_thread: int, seconds: float) -> None:
        super().__init__(dim=64)
        self.fold_thread = fold_thread
        self.seconds = seconds

    def embed(self, texts: Sequence[str]) -> Matrix:
        if threading.get_ident() != self.fold_thread:
            time.sleep(self.seconds)
        return super().embed(texts)


async def test_waiting_for_the_vectors_embedded_ahead_counts_as_embedding() -> None:
    embedder = SlowAheadEmbedder(threading.get_ident(), seconds=0.3)
    config = EngineConfig(embed_ahead=True)
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = engine.new_memory("alice")
    first, second = sample_events(2), sample_events(4)[2:]

    await engine.fold_batch(memory, first, ahead=second)
    started = time.perf_counter()
    batch = await engine.fold_batch(memory, second)
    wall = time.perf_counter() - started

    assert batch.steps.seconds["embed"] >= 0.1  # the next batch waited for its vectors
    assert batch.steps.total <= wall
