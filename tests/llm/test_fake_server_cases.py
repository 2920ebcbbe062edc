"""Every failure mode of a model server ends with the event folded and nothing lost."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, new_concept, plan_json
from llm_helpers import fold as fold_folded

from foldmem_testing.fakeserver import Reply
from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.llm.breaker import BreakerState
from topologies.memory import event_node_id

VALID = plan_json(*new_concept("Flux Tariffs launch"))


async def fold(rig: Rig, event: RawEvent) -> Any:
    result = await fold_folded(rig, event)
    node_id = event_node_id(event.tenant, event.id)
    assert rig.memory(event.tenant).graph.node(node_id).title == event.title
    return result


def concepts(rig: Rig, tenant: str = "alice") -> list[str]:
    return [n.title for n in rig.memory(tenant).graph.nodes(NodeKind.CONCEPT)]


async def test_valid_plan_is_applied(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=VALID))
    result = await fold(rig, make_event("Flux Tariffs weekly launch sync", "agenda"))
    assert result.status == "folded" and result.planner == "llm"
    assert concepts(rig) == ["Flux Tariffs launch"]
    assert rig.heuristic.calls == 0
    body = rig.fake.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    row = rig.ledger.tenant("alice")
    assert row["llm"] == 1 and row["calls"] == 1 and row["tokens_in"] > 0


async def test_malformed_json_gets_one_repair(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content='{"ops": [ {"op": "ADD_NODE", '), Reply(content=VALID))
    result = await fold(rig, make_event("Flux sync"))
    assert result.planner == "llm" and concepts(rig) == ["Flux Tariffs launch"]
    assert rig.fake.calls == 2
    repair_turn = rig.fake.requests[1]["messages"]
    assert repair_turn[-2]["role"] == "assistant"
    assert "could not be used" in repair_turn[-1]["content"]
    assert "JSON" in repair_turn[-1]["content"]
    assert rig.ledger.tenant("alice")["repaired"] == 1


async def test_still_malformed_after_repair_falls_back(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content="sorry, I cannot"), Reply(content="{still not json"))
    result = await fold(rig, make_event("Flux sync"))
    assert rig.fake.calls == 2 and rig.heuristic.calls == 1
    assert result.status == "folded"  # the heuristic plan went through the LLM planner
    row = rig.ledger.tenant("alice")
    assert row["fallback_invalid"] == 1 and row["calls"] == 2


async def test_dangling_ids_are_repaired(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    dangling = plan_json(
        {
            "op": "ADD_EDGE",
            "src": "E",
            "dst": "W9",
            "kind": "REINFORCES",
            "reasoning": "x",
            "grounded_in": ["E"],
        }
    )
    rig.fake.push(Reply(content=dangling), Reply(content=VALID))
    await fold(rig, make_event("Flux sync"))
    assert "W9" in rig.fake.requests[1]["messages"][-1]["content"]
    assert concepts(rig) == ["Flux Tariffs launch"]


async def test_dangling_ids_twice_fall_back(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    dangling = plan_json(
        {"op": "REMOVE_NODE", "id": "c_doesnotexist", "reasoning": "x", "grounded_in": ["E"]}
    )
    rig.fake.push(Reply(content=dangling), Reply(content=dangling))
    result = await fold(rig, make_event("Flux sync"))
    assert rig.heuristic.calls == 1 and result.status == "folded"
    assert concepts(rig) == []


async def test_think_block_and_fences_are_stripped(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    content = (
        '<think>The user wants {"ops": []}? No, a concept.</think>\n'
        f"Here you go:\n```json\n{VALID}\n```\n"
    )
    rig.fake.push(Reply(content=content))
    await fold(rig, make_event("Flux sync"))
    assert rig.fake.calls == 1 and concepts(rig) == ["Flux Tariffs launch"]


async def test_429_retry_after_is_respected(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    rig.fake.push(Reply(status=429, headers={"Retry-After": "0.3"}), Reply(content=VALID))
    started = time.perf_counter()
    result = await fold(rig, make_event("Flux sync"))
    assert time.perf_counter() - started >= 0.3
    assert rig.fake.calls == 2 and result.planner == "llm"
    assert concepts(rig) == ["Flux Tariffs launch"]


async def test_429_with_long_retry_after_falls_back_at_once(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(retry_after_max_s=0.5)
    rig.fake.push(Reply(status=429, headers={"Retry-After": "120"}))
    started = time.perf_counter()
    await fold(rig, make_event("Flux sync"))
    assert time.perf_counter() - started < 30  # nowhere near the 120 s it was asked to wait
    assert rig.fake.calls == 1 and rig.heuristic.calls == 1
    assert rig.ledger.tenant("alice")["fallback_error"] == 1


async def test_500_is_retried(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    rig.fake.push(Reply(status=500), Reply(status=503), Reply(content=VALID))
    result = await fold(rig, make_event("Flux sync"))
    assert rig.fake.calls == 3 and result.planner == "llm"
    assert rig.planner.breaker.status()["consecutive_failures"] == 0


async def test_500_forever_falls_back(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig(max_retries=2)
    rig.fake.push(*[Reply(status=500)] * 3)
    await fold(rig, make_event("Flux sync"))
    assert rig.fake.calls == 3 and rig.heuristic.calls == 1
    assert rig.planner.breaker.status()["consecutive_failures"] == 1


async def test_timeout_retries_then_falls_back(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(timeout_s=0.3, max_retries=1)
    rig.fake.push(Reply(delay=60.0, content=VALID), Reply(delay=60.0, content=VALID))
    started = time.perf_counter()
    result = await fold(rig, make_event("Flux sync"))
    assert time.perf_counter() - started < 30.0  # gave up long before the slow replies
    assert rig.fake.calls == 2 and rig.heuristic.calls == 1 and result.status == "folded"


async def test_timeout_then_success(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()  # the tests' generous deadline: the retried reply must not miss it
    rig.fake.push(Reply(delay=60.0, content=VALID), Reply(content=VALID))
    result = await fold(rig, make_event("Flux sync"))
    assert result.planner == "llm" and concepts(rig) == ["Flux Tariffs launch"]


async def test_server_rejecting_json_schema_falls_to_json_object_and_remembers(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.reject_json_schema = True
    await fold(rig, make_event("Flux sync", "one"))
    await fold(rig, make_event("Passport renewal appointment", "two"))
    formats = [(b.get("response_format") or {}).get("type") for b in rig.fake.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    # the next rung still gives the schema: {"type": "json_object", "schema": ...}
    assert all("schema" in b["response_format"] for b in rig.fake.requests[1:])
    endpoint = rig.planner.config.endpoint
    assert rig.planner.client.capabilities.get(endpoint) == "json_object_schema"
    assert len(concepts(rig)) == 2 and rig.heuristic.calls == 0


async def test_ladder_reaches_plain_text(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    rig.fake.push(*[Reply(status=400)] * 3, Reply(content=f"Plan: {VALID} done."))
    await fold(rig, make_event("Flux sync"))
    assert "response_format" not in rig.fake.requests[3]
    assert concepts(rig) == ["Flux Tariffs launch"]
    assert rig.planner.client.capabilities.get(rig.planner.config.endpoint) == "text"


async def test_missing_usage_is_estimated(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=VALID, usage=False))
    await fold(rig, make_event("Flux sync"))
    row = rig.ledger.tenant("alice")
    assert row["estimated_calls"] == 1 and row["tokens_in"] > 100


async def test_server_answering_json_schema_with_a_500_is_a_capability_not_an_outage(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.reject_json_schema = True
    rig.fake.reject_status = 500  # what llama-cpp-python's server does
    result = await fold(rig, make_event("Flux sync"))
    formats = [(b.get("response_format") or {}).get("type") for b in rig.fake.requests]
    assert formats == ["json_schema", "json_object"]
    assert "schema" in rig.fake.requests[1]["response_format"]
    assert result.planner == "llm" and rig.heuristic.calls == 0  # the model's own plan
    assert rig.planner.breaker.state == BreakerState.CLOSED
