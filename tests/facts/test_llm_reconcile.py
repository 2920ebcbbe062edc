"""The model decides ADD / SUPERSEDE / UPDATE / NONE (a real loopback OpenAI-compatible server);
the heuristic rules decide when it is down or answers invalidly."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from adapters.llm.client import CapabilityMemory, LLMClient
from benchmarks.bench_beliefs import make_engine, statement_event
from foldmem_testing.fakeserver import FakeOpenAI, Reply
from schemas.graph import NodeKind
from tests.facts.helpers import T0
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.facts.llm_extract import PlanFacts
from topologies.facts.llm_reconcile import LLMReconciler
from topologies.facts.step import FactStep
from topologies.llm.config import LLMConfig
from topologies.llm.prompts.reconcile_fact import TASK, parse_reply
from topologies.llm.usage import UsageLedger
from topologies.memory import TenantMemory

CONFIG = {
    "model": "fake-model",
    "api_key": "sk-test",
    "timeout_s": 5.0,
    "max_retries": 0,
    "backoff_base_s": 0.01,
    "backoff_max_s": 0.02,
}
SEATS = ["Window seat on every flight, always.", "Aisle seats from now on, my knees need the room."]
MOVE = ["I live in Porto.", "I moved to Berlin last month."]


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


def judged_engine(fake: FakeOpenAI, embedder: HashingEmbedder) -> FoldEngine:
    client = LLMClient(
        LLMConfig.model_validate({**CONFIG, "base_url": fake.base_url}),
        capabilities=CapabilityMemory(),
    )
    return make_engine(embedder, facts=FactStep(embedder, judge=LLMReconciler(client)))


def answer(decision: str, target: str | None = None) -> Reply:
    return Reply(content=json.dumps({"decision": decision, "target": target, "reason": "r"}))


async def fold_all(eng: FoldEngine, texts: list[str]) -> TenantMemory:
    memory = eng.new_memory("erin")
    for i, text in enumerate(texts):
        when = T0 + timedelta(days=10 * i)
        await eng.fold(memory, statement_event("erin", ("s", i), text, None, when))
    return memory


def facts(memory: TenantMemory) -> list[Any]:
    return sorted(memory.graph.nodes(NodeKind.FACT), key=lambda n: n.ts or T0)


async def test_the_models_supersede_is_applied(fake: FakeOpenAI, embedder: HashingEmbedder) -> None:
    alone = facts(await fold_all(make_engine(embedder), SEATS))
    assert not alone[1].supersedes  # the heuristic alone keeps them apart
    fake.push(answer("SUPERSEDE", "F1"))
    old, new = facts(await fold_all(judged_engine(fake, embedder), SEATS))
    assert new.supersedes == old.id and old.superseded_by == new.id
    assert str(new.attrs["reconcile"]).startswith("model")
    assert fake.calls == 1  # the first statement had no candidate: no call
    request = fake.requests[0]
    prompt = json.loads(request["messages"][1]["content"])
    assert prompt["new"]["text"] == SEATS[1]
    assert [c["id"] for c in prompt["candidates"]] == ["F1"]
    assert prompt["candidates"][0]["text"] == SEATS[0]


async def test_the_models_add_overrides_the_heuristic(
    fake: FakeOpenAI, embedder: HashingEmbedder
) -> None:
    fake.push(answer("ADD"))
    old, new = facts(await fold_all(judged_engine(fake, embedder), MOVE))
    assert not new.supersedes and not old.superseded_by


async def test_none_writes_nothing_and_update_reinforces(
    fake: FakeOpenAI, embedder: HashingEmbedder
) -> None:
    fake.push(answer("NONE"), answer("UPDATE", "F1"))
    texts = ["I live in Porto.", "Porto is where I live.", "Now living in Porto, near the river."]
    (only,) = facts(await fold_all(judged_engine(fake, embedder), texts))
    assert only.reinforcement == 1 and "river" in only.text


@pytest.mark.parametrize(
    "reply",
    [
        answer("SUPERSEDE", "F7"),  # a candidate that was not shown
        answer("SUPERSEDE"),  # no target
        answer("ADD", "F1"),  # a target for ADD
        Reply(content='{"decision": "REPLACE", "target": "F1"}'),  # not a decision
        Reply(content="I think the user moved."),  # no JSON at all
        Reply(status=500),  # the model server is down
    ],
    ids=["unknown-target", "no-target", "add-with-target", "bad-op", "no-json", "down"],
)
async def test_an_invalid_reply_falls_back_to_the_heuristic(
    reply: Reply, fake: FakeOpenAI, embedder: HashingEmbedder
) -> None:
    fake.push(reply)
    old, new = facts(await fold_all(judged_engine(fake, embedder), MOVE))
    assert fake.calls == 1
    assert new.supersedes == old.id  # the heuristic's decision: same key, new value
    assert new.attrs["reconcile"] == "same key, new value"


def test_parse_reply_checks_targets_against_the_candidates_shown() -> None:
    assert parse_reply({"decision": "UPDATE", "target": "f2"}, 2).target == 1
    assert parse_reply({"decision": "NONE", "target": None}, 2).op == "NONE"
    with pytest.raises(ValueError):
        parse_reply({"decision": "UPDATE", "target": "F3"}, 2)
    assert TASK == "reconcile_fact"


async def test_a_models_update_of_a_belief_about_something_else_is_overruled(
    fake: FakeOpenAI, embedder: HashingEmbedder
) -> None:
    """A small model answers UPDATE for most statements; an UPDATE whose target is about
    another thing would tie this event to that belief. The rules decide instead (ADD here),
    and the ledger counts the overruled answer."""
    ledger = UsageLedger(clock=lambda: "2026-01-01")
    client = LLMClient(
        LLMConfig.model_validate({**CONFIG, "base_url": fake.base_url}),
        capabilities=CapabilityMemory(),
    )
    judge = LLMReconciler(client, ledger=ledger)
    eng = make_engine(embedder, facts=FactStep(embedder, judge=judge))
    fake.push(answer("UPDATE", "F1"))
    texts = ["I live in Porto.", "Now I drink three espressos a day."]
    old, new = facts(await fold_all(eng, texts))
    assert fake.calls == 1
    assert new.id != old.id and old.reinforcement == 0
    assert not str(new.attrs["reconcile"]).startswith("model")
    assert ledger.totals().reconcile_overruled == 1 and ledger.totals().reconcile_llm == 0


async def test_with_plan_facts_the_model_judges_only_the_plans_own_statements(
    fake: FakeOpenAI, embedder: HashingEmbedder
) -> None:
    """The rules' statements added after the plan's (what a small model left out) are
    reconciled by the rules: asking the model about them would cost a call each."""
    client = LLMClient(
        LLMConfig.model_validate({**CONFIG, "base_url": fake.base_url}),
        capabilities=CapabilityMemory(),
    )
    sink = PlanFacts()
    step = FactStep(embedder, extractor=sink, judge=LLMReconciler(client, calls_per_event=5))
    eng = make_engine(embedder, facts=step)
    memory = eng.new_memory("erin")
    first = statement_event("erin", ("s", 0), MOVE[0], None, T0)
    await eng.fold(memory, first)
    second = statement_event("erin", ("s", 1), MOVE[1], None, T0 + timedelta(days=10))
    sink.put("erin", second.id, ["The corner bakery sells rye bread."])  # the move: the rules
    await eng.fold(memory, second)
    assert fake.calls == 0
    old = next(f for f in facts(memory) if "Porto" in f.text)
    assert old.superseded_by  # the rules' decision: same key, new value
