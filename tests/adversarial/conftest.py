"""Fixtures for the attack tests: the sample stream folded by the heuristic planner, and an
LLM planner wired to a fake model that obeys instructions inside events."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from foldmem_testing.fakeserver import FakeOpenAI
from schemas.events import RawEvent
from tests.adversarial.obeying_model import obeying_reply

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_stream.jsonl"


@pytest.fixture(scope="session")
def sample_events() -> list[RawEvent]:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    return [RawEvent.model_validate_json(line) for line in lines if line.strip()]


@pytest.fixture
async def obeying_model() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(handler=obeying_reply)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture(scope="session")
def folded_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample stream folded once into a data dir (hashing embedder); copy it to change it."""
    from tests.app.conftest import app_settings, run_once

    path = tmp_path_factory.mktemp("sample") / "data"
    stats = asyncio.run(run_once(app_settings(path), SAMPLE))
    assert stats.folded > 100
    return path


@pytest.fixture
def sample_dir(folded_sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    shutil.copytree(folded_sample_dir, path)
    monkeypatch.setenv("FOLDMEM_DATA_DIR", str(path))
    monkeypatch.setenv("FOLDMEM_EMBEDDER", "hashing")
    monkeypatch.setenv("FOLDMEM_LOG_LEVEL", "warning")
    monkeypatch.setenv("FOLDMEM_SWEEP_INTERVAL", "0")
    return path
