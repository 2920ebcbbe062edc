"""Fixtures for the attack tests: the sample stream folded by the heuristic planner, and an
LLM planner wired to a fake model that obeys instructions inside events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from schemas.events import RawEvent
from tests.adversarial.obeying_model import obeying_reply
from topologies.llm.fakeserver import FakeOpenAI

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
