"""LLM fact extraction against the loopback fake model: an unusable reply falls back to the
rules, and extraction goes through the planner's circuit breaker and usage ledger."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, fold

from foldmem_testing.fakeserver import Reply, default_plan_reply
from schemas.graph import NodeKind
from topologies.facts.extract import extract_items
from topologies.facts.llm_extract import PlanFacts
from topologies.facts.step import event_text
from topologies.llm.breaker import BreakerState
from topologies.llm.prompts.extract_facts import SYSTEM_PROMPT

BODIES = [
    "I moved to Ghent last week and I love the canals.",
    "My employer is Acme Logistics since March.",
    "I prefer tea over coffee in the mornings now.",
]
ITEMS = {
    "items": [
        {
            "text": "The user lives in Ghent.",
            "kind": "identity",
            "subject": "home_city",
            "value": "ghent",
        }
    ]
}


def is_extraction(body: dict[str, Any]) -> bool:
    return any(m.get("content") == SYSTEM_PROMPT for m in body.get("messages", []))


def answering(extraction: str) -> Callable[[dict[str, Any]], Reply]:
    """Plans as usual; fact extraction requests get `extraction` as the reply text."""

    def handler(body: dict[str, Any]) -> Reply:
        return Reply(content=extraction) if is_extraction(body) else default_plan_reply(body)

    return handler


def extraction_calls(rig: Rig) -> int:
    return sum(1 for body in rig.fake.requests if is_extraction(body))


def fact_texts(rig: Rig) -> list[str]:
    return sorted(n.text for n in rig.memory().graph.nodes(NodeKind.FACT))


def rule_facts() -> list[str]:
    return sorted(i.text for body in BODIES for i in extract_items(body))


async def fold_bodies(rig: Rig, make_event: Any) -> None:
    for body in BODIES:
        event = make_event("note", body)
        assert event_text(event) == body
        await fold(rig, event)


async def test_an_unparseable_reply_falls_back_to_the_rules(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    assert rule_facts(), "the rules find facts in these bodies"
    for reply in ("<think>The user moved, so home_city...</think>", "items: none, sorry", ""):
        rig = make_rig(fact_model=True, facts="call")
        rig.fake.requests.clear()  # one server for the three rigs
        rig.fake.handler = answering(reply)
        await fold_bodies(rig, make_event)
        assert extraction_calls(rig) == len(BODIES)
        assert fact_texts(rig) == rule_facts(), reply
        assert rig.ledger.tenant("alice")["facts_invalid"] == len(BODIES)


async def test_a_reply_without_items_falls_back_but_an_empty_list_is_an_answer(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(fact_model=True, facts="call")
    rig.fake.handler = answering(json.dumps({"facts": ["The user lives in Ghent."]}))
    await fold_bodies(rig, make_event)
    assert fact_texts(rig) == rule_facts()

    rig = make_rig(fact_model=True, facts="call")
    rig.fake.handler = answering(json.dumps({"items": []}))
    await fold_bodies(rig, make_event)
    assert fact_texts(rig) == []  # the model said: nothing worth remembering


async def test_with_the_breaker_open_no_extraction_call_is_made(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(fact_model=True, facts="call", breaker_reset_s=3600.0)
    rig.fake.handler = answering(json.dumps(ITEMS))
    for _ in range(rig.planner.breaker.failure_threshold):
        rig.planner.breaker.record_failure()
    assert rig.planner.breaker.state == BreakerState.OPEN
    await fold_bodies(rig, make_event)
    assert rig.fake.calls == 0
    assert fact_texts(rig) == rule_facts()
    assert rig.ledger.tenant("alice")["facts_skipped"] == len(BODIES)


async def test_extraction_failures_open_the_breaker(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(fact_model=True, facts="call", max_retries=0, breaker_reset_s=3600.0)
    rig.fake.handler = lambda body: Reply(status=503)  # the model is down
    for i in range(6):
        await fold(rig, make_event(f"note {i}", BODIES[i % len(BODIES)]))
    threshold = rig.planner.breaker.failure_threshold
    assert threshold == 3
    # event 1: plan and extraction fail (extraction runs after the plan); event 2: the plan
    # fails, the breaker opens; from then on neither task calls the model
    assert rig.fake.calls == threshold and extraction_calls(rig) == 1
    assert rig.planner.breaker.state == BreakerState.OPEN
    today = rig.ledger.tenant("alice")
    assert today["facts_error"] == 1 and today["facts_skipped"] == 5
    assert fact_texts(rig) == rule_facts()  # the rules ran (repeated bodies: duplicates)


async def test_extraction_tokens_are_booked_and_count_against_the_budget(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(fact_model=True, facts="call")
    rig.fake.handler = answering(json.dumps(ITEMS))
    await fold(rig, make_event("note", BODIES[0]))
    today = rig.ledger.tenant("alice")
    assert today["events"] == 1 and today["calls"] == 2  # one plan, one extraction
    assert today["facts_llm"] == 1
    assert "The user lives in Ghent." in fact_texts(rig)

    rig = make_rig(fact_model=True, facts="call", daily_token_budget=1)
    rig.fake.handler = answering(json.dumps(ITEMS))
    await fold(rig, make_event("note", BODIES[0]))  # the first call spends the budget
    calls = rig.fake.calls
    await fold(rig, make_event("note", BODIES[1]))
    assert rig.fake.calls == calls  # over budget: neither a plan nor an extraction call
    assert rig.ledger.tenant("alice")["facts_skipped"] >= 1


# ----------------------------------------------------- facts="plan": the plan's statements first
async def test_the_plans_facts_come_with_the_rules_statements_the_model_left_out(
    make_event: Any,
) -> None:
    """A small model states one of the event's three statements; the rules' reading supplies
    the two it left out, and the one it restated in its own words is not added twice."""
    body = " ".join(BODIES)
    event = make_event("note", body)
    sink = PlanFacts()
    sink.put(event.tenant, event.id, ["The user moved to Ghent last week"])
    items = await sink.extract(event)
    assert items is not None
    texts = [i.text for i in items]
    assert texts[0] == "The user moved to Ghent last week"
    rules = [i.text for i in extract_items(body)]
    assert len(rules) >= 3
    restated = [t for t in rules if "Ghent" in t]
    assert restated and not set(restated) & set(texts[1:])
    assert set(texts[1:]) == set(rules) - set(restated)


async def test_an_event_without_plan_facts_gets_the_rules(make_event: Any) -> None:
    assert await PlanFacts().extract(make_event("note", BODIES[0])) is None
