"""The local-model benchmark end to end against the loopback fake model: a run writes its
figures side by side with the heuristic's, and a second run replays what the first asked."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import bench_llm_local, bench_locomo
from foldmem_testing.fakeserver import FakeOpenAI, event_of
from tests.read.test_bench_structural import _scenario


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    """The fake model server on a loop of its own (the benchmark runs its own loops)."""
    server = FakeOpenAI()
    ready, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        await server.start()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.02)
        await server.stop()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield server
    stop.set()
    thread.join(10)


def test_a_run_reports_side_by_side_and_a_second_run_replays(
    model: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    (data / "cogeval").mkdir(parents=True)
    (data / "cogeval" / "tiny.json").write_text(json.dumps(_scenario()))
    monkeypatch.setattr(bench_llm_local, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(bench_locomo, "EMBED_CACHE", tmp_path / "cache")
    args = ["--base-url", model.base_url, "--data-dir", str(data), "--embedder", "hashing",
            "--work", str(tmp_path / "work"), "--name", "fake"]  # fmt: skip

    bench_llm_local.main([*args, "--limit", "3"])
    first = model.calls
    assert first >= 3
    rows = (tmp_path / "work" / "fake" / "tiny.events.jsonl").read_text().splitlines()
    assert [json.loads(r)["event_id"] for r in rows] == ["e1", "e2", "e3"]

    bench_llm_local.main([*args, "--limit", "4"])  # e1-e3 replayed, e4 folded anew
    asked = [event_of(body).get("body", "") for body in model.requests[first:]]
    assert not any(f"(note {n})" in text for text in asked for n in (1, 2, 3))
    rows = (tmp_path / "work" / "fake" / "tiny.events.jsonl").read_text().splitlines()
    assert [json.loads(r)["event_id"] for r in rows] == ["e1", "e2", "e3", "e4"]
    report = json.loads((tmp_path / "results" / "fake.json").read_text())
    (tiny,) = report["scenarios"]
    fourth = json.loads(rows[3])
    # e4 repeats e2 nearly word for word: folded without a call, so not live
    assert fourth["outcome"] == "skipped_duplicate" and fourth["calls"] == 0
    assert tiny["events"] == 4 and tiny["live_events"] == 0
    assert tiny["plans"]["valid_non_empty"] == 1.0 and tiny["plans"]["calls_per_event"] == 0.75
    assert {"grounded_f1", "label_f1@0.6"} <= set(tiny["model_structure"])
    assert {"grounded_f1", "label_f1@0.6"} <= set(tiny["heuristic_structure"])
    text = (tmp_path / "results" / "fake.md").read_text()
    assert "| tiny | model |" in text and "| tiny | heuristic |" in text
