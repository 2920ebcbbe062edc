"""The engine takes its model client at construction: the real LLMClient on an
httpx.MockTransport (no server, no patching) serves fact extraction through FoldEngine."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx

from adapters.llm.client import CapabilityMemory, LLMClient
from schemas.events import RawEvent
from schemas.graph import NodeKind
from tests.facts.helpers import T0, NoopPlanner
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.llm.config import LLMConfig

ITEMS = {
    "items": [
        {
            "text": "The user lives in Ghent.",
            "kind": "identity",
            "subject": "home_city",
            "value": "Ghent",
        }
    ]
}


def completion(content: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
        },
    )


async def test_fact_extraction_runs_on_the_client_the_engine_was_given(
    embedder: HashingEmbedder,
) -> None:
    asked: list[dict[str, object]] = []

    def model(request: httpx.Request) -> httpx.Response:
        asked.append(json.loads(request.content))
        schema = json.dumps(asked[-1].get("response_format", {}))
        return completion(json.dumps(ITEMS if "items" in schema else {"decision": "ADD"}))

    config = LLMConfig(base_url="http://model.test/v1", model="m", server="hosted", max_retries=0)
    http = httpx.AsyncClient(transport=httpx.MockTransport(model))
    client = LLMClient(config, CapabilityMemory(), http_client=http)
    engine = FoldEngine(embedder, NoopPlanner(), EngineConfig(), completer=client)
    memory = engine.new_memory("erin")

    event = RawEvent(
        id="m1", tenant="erin", source="chat", ts=T0 + timedelta(days=1), body="Settled in!"
    )
    await engine.fold(memory, event)
    await http.aclose()

    assert asked, "the engine's fact step asked the injected client"
    facts = [n for n in memory.graph.nodes(NodeKind.FACT)]
    assert [f.attrs.get("key") for f in facts] == ["identity:home_city"]
    assert facts[0].attrs["extractor"] == "llm"
