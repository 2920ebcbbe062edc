"""The optional LLM extraction step (a fake client answering like the model server)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from schemas.events import RawEvent
from schemas.graph import NodeKind
from tests.facts.helpers import T0, engine
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.facts.llm_extract import LLMExtractor
from topologies.facts.step import FactStep
from topologies.heuristic_planner import HeuristicPlanner


class FakeClient:
    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies

    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
    ) -> Any:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


async def test_llm_items_are_reconciled_into_a_chain(embedder: HashingEmbedder) -> None:
    client = FakeClient(
        [
            {
                "items": [
                    {
                        "text": "The user drinks oat flat whites every morning.",
                        "kind": "stance",
                        "subject": "coffee",
                        "value": "oat flat white",
                    }
                ]
            },
            {
                "items": [
                    {
                        "text": "The user switched to black filter coffee.",
                        "kind": "stance",
                        "subject": "coffee",
                        "value": "black filter",
                        "revision": True,
                    }
                ]
            },
            RuntimeError("model down"),  # falls back to the deterministic rules
        ]
    )
    eng = engine(embedder, heuristic=False, facts=FactStep(embedder, LLMExtractor(client)))
    memory = eng.new_memory("erin")
    bodies = [
        "oat flat white again, obviously",
        "ok so black filter from now on",
        "I moved to Ghent last week.",
    ]
    for i, body in enumerate(bodies):
        await eng.fold(
            memory,
            RawEvent(
                id=f"c{i}", tenant="erin", source="chat", ts=T0 + timedelta(days=i), body=body
            ),
        )
    facts = sorted(memory.graph.nodes(NodeKind.FACT), key=lambda n: n.created_at)
    assert [f.attrs.get("key") for f in facts] == [
        "stance:coffee",
        "stance:coffee",
        "identity:home_city",
    ]
    assert facts[1].supersedes == facts[0].id and facts[0].attrs["extractor"] == "llm"


def test_without_a_completer_the_fact_step_has_no_model(embedder: HashingEmbedder) -> None:
    eng = engine(embedder)
    assert eng.facts.extractor is None and eng.facts.judge is None and eng.inductor is None


def test_a_completer_gives_the_fact_step_and_the_nightly_engine_their_model(
    embedder: HashingEmbedder,
) -> None:
    config = EngineConfig()
    client = FakeClient([])
    eng = FoldEngine(embedder, HeuristicPlanner(embedder, config), config, completer=client)
    assert isinstance(eng.facts.extractor, LLMExtractor) and eng.facts.extractor.client is client
    assert eng.facts.judge is not None and eng.inductor is not None
    assert eng.inductor.client is client
