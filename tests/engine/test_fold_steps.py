"""Where a fold's time goes: each fold and each batch says what its steps cost."""

from __future__ import annotations

import time

from tests.engine.test_fold_batch import heuristic_engine, sample_events
from topologies.embedding import HashingEmbedder
from topologies.fold_steps import FOLD_STEPS, StepTimes

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
