"""The runtime tunes Python's cyclic garbage collector at start: a fold frees most of what it
allocates by reference counting, so the collector need not walk the young objects every 700
allocations (stream_app/collector.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import app_settings, make_stream, run_once, write_jsonl


@pytest.fixture
def python_thresholds() -> Iterator[tuple[int, int, int]]:
    """Python's own thresholds, put back after the test (the test process keeps running)."""
    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    yield gc.get_threshold()
    gc.set_threshold(*before)


async def test_a_run_raises_the_first_generation_threshold_to_the_setting(
    tmp_path: Path, python_thresholds: tuple[int, int, int]
) -> None:
    settings = app_settings(tmp_path / "d", gc_threshold=25_000)
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(3))

    await run_once(settings, stream)

    assert gc.get_threshold() == (25_000, *python_thresholds[1:])


async def test_a_threshold_of_zero_keeps_pythons_own(
    tmp_path: Path, python_thresholds: tuple[int, int, int]
) -> None:
    settings = app_settings(tmp_path / "d", gc_threshold=0)
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(3))

    await run_once(settings, stream)

    assert gc.get_threshold() == python_thresholds
