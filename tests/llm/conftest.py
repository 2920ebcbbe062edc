"""Fixtures for the LLM planner: a real fake OpenAI server on loopback and a wired engine."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.llm.client import CapabilityMemory
from adapters.llm.factory import llm_planner
from foldmem_testing.fakeserver import FakeOpenAI
from schemas.plans import UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.executor import PlanExecutor
from topologies.llm.config import LLMConfig
from topologies.llm.planner import LLMPlanner
from topologies.llm.usage import UsageLedger
from topologies.naming import Namer
from topologies.planner import PlanRequest

FAST = {
    "model": "fake-model",
    "api_key": "sk-test",
    "rule_structure": False,  # the recording heuristic counts fallbacks only (see
    # test_small_model_replies for the heuristic's dates and links in a model's plan)
    "server": "hosted",  # the loopback fake stands for a hosted API (tests of local servers
    # set server="llamacpp": one request at a time, streamed, no retry of a timeout)
    "timeout_s": 5.0,  # generous: a loaded CI machine must not turn replies into timeouts
    "max_retries": 2,
    "backoff_base_s": 0.01,
    "backoff_max_s": 0.05,
    "retry_after_max_s": 1.0,
    "breaker_failures": 3,
    "breaker_reset_s": 0.2,
}


class RecordingHeuristic:
    """Stands in for the heuristic planner: an empty plan, and a count of calls."""

    name = "heuristic"

    def __init__(self) -> None:
        self.calls = 0

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        self.calls += 1
        return UpdatePlan(planner=self.name)


@dataclass
class Rig:
    fake: FakeOpenAI
    planner: LLMPlanner
    engine: FoldEngine
    heuristic: RecordingHeuristic
    memories: dict[str, Any] = field(default_factory=dict)

    def memory(self, tenant: str = "alice") -> Any:
        if tenant not in self.memories:
            self.memories[tenant] = self.engine.new_memory(tenant)
        return self.memories[tenant]

    @property
    def ledger(self) -> UsageLedger:
        return self.planner.ledger


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def make_rig(fake: FakeOpenAI, embedder: HashingEmbedder) -> Callable[..., Rig]:
    def factory(
        on: FakeOpenAI | None = None,
        namer: Namer | None = None,
        fact_model: bool = False,
        **overrides: Any,
    ) -> Rig:
        """A rig on the fake server ``on`` (default: the test's) with LLMConfig overrides;
        ``fact_model``: the engine's fact step asks the model too (the planner's client)."""
        model = on or fake
        config = LLMConfig.model_validate({**FAST, "base_url": model.base_url, **overrides})
        engine_config = EngineConfig()
        heuristic = RecordingHeuristic()
        executor = PlanExecutor(embedder, engine_config)
        planner = llm_planner(
            config,
            heuristic=heuristic,
            validator=executor.validate,
            capabilities=CapabilityMemory(),
            namer=namer,
            fact_items=fact_model,
        )
        completer = planner.client if fact_model else None
        engine = FoldEngine(
            embedder, planner, engine_config, fallback=heuristic, completer=completer
        )
        return Rig(model, planner, engine, heuristic)

    return factory
