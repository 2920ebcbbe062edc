"""An intent's vector says its goal: the events of its theme and a person's questions find it
by what is to be done, so its vector stays put while its description grows and its deadline
moves, and is embedded again only when the goal is renamed (issue 15: the fold thread spent a
quarter of its time embedding intents' running descriptions)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import numpy as np
from fold_helpers import ScriptedPlanner, Step, run_plan
from test_goal_titles import REVIEW, event, fold, launch, the_intent

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import title_without_deadline
from schemas.plans import AddEdge, AddNode, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.executor import INTENT_VECTORS_KEY
from topologies.memory import TenantMemory, event_node_id, stable_id
from topologies.vector_index import Vector

MakeEvent = Callable[..., RawEvent]
GOAL = "Renew the passport"
LATER = REVIEW - timedelta(days=1)
STORY = "This came up because 2 events between 2 Nov and 3 Nov point to the same goal (Passport)."


def plan(*ops: AddNode | AddEdge | UpdateNode) -> UpdatePlan:
    return UpdatePlan(ops=list(ops), planner="test")


def passport_intent(engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent) -> str:
    """An intent "Renew the passport (by 18 Dec)" with the story of its first events, backed
    by two concepts the event grounds."""
    event = event_node_id("alice", "ev-1")
    ops: list[AddNode | AddEdge | UpdateNode] = []
    for ref, title in (("p", "Passport"), ("a", "Appointment")):
        ops.append(AddNode(ref=ref, kind=NodeKind.CONCEPT, title=title))
        ops.append(AddEdge(src=event, dst=ref, kind=EdgeKind.GROUNDS))
        ops.append(AddEdge(src=ref, dst="i", kind=EdgeKind.TRIGGERS))
    intent = AddNode(ref="i", kind=NodeKind.INTENT, title=f"{GOAL} (by 18 Dec)", text=STORY)
    run_plan(engine, memory, make_event("Passport expires", id="ev-1"), plan(intent, *ops))
    return stable_id("i", "alice", "ev-1", "i")


def vector_of(memory: TenantMemory, node_id: str) -> Vector:
    vector = memory.index(NodeKind.INTENT).get(node_id)
    assert vector is not None
    return vector


def goal_vector(embedder: HashingEmbedder, title: str) -> Vector:
    return embedder.embed([title_without_deadline(title)])[0]


def test_an_intent_is_embedded_as_its_goal_without_its_deadline(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent, embedder: HashingEmbedder
) -> None:
    intent = passport_intent(engine, memory, make_event)

    assert np.allclose(vector_of(memory, intent), goal_vector(embedder, GOAL), atol=1e-6)


def test_an_intent_whose_description_grows_and_deadline_moves_keeps_its_vector(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    intent = passport_intent(engine, memory, make_event)
    before = vector_of(memory, intent)
    engine.embedder.forget()  # as after each batch: nothing is remembered
    calls = engine.embedder.calls
    grown = UpdateNode(
        id=intent,
        title=f"{GOAL} (by 20 Dec)",
        text=f"{STORY} The latest is 'Appointment moved' on 4 Nov.\nDue by 20 Dec 2026.",
    )
    run_plan(engine, memory, make_event("Appointment moved", id="ev-2"), plan(grown))

    assert memory.graph.node(intent).title == f"{GOAL} (by 20 Dec)"
    assert np.array_equal(vector_of(memory, intent), before)
    assert engine.embedder.calls == calls + 1  # the event's own text, not the intent again


def test_an_intent_whose_goal_is_renamed_is_embedded_again(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent, embedder: HashingEmbedder
) -> None:
    intent = passport_intent(engine, memory, make_event)
    before = vector_of(memory, intent)
    renamed = UpdateNode(id=intent, title="Get a new passport (by 18 Dec)")
    run_plan(engine, memory, make_event("Express passport", id="ev-2"), plan(renamed))

    after = vector_of(memory, intent)
    assert not np.allclose(after, before, atol=1e-3)
    assert np.allclose(after, goal_vector(embedder, "Get a new passport"), atol=1e-6)


async def test_every_folded_intents_vector_is_its_goal_as_stored() -> None:
    """Whatever the fold did to an intent's title, text and deadline (emergence, a moved
    review, a description relabelled by consolidation), its vector is a function of the node
    as stored: an index rebuilt from the store gives the same vectors."""
    script, events = launch()
    memory, _ = await fold(script, events)
    intent = the_intent(memory)

    assert intent.text and intent.deadline is not None
    assert np.allclose(
        vector_of(memory, intent.id), goal_vector(HashingEmbedder(256), intent.title), atol=1e-6
    )


async def test_a_store_whose_intents_were_embedded_with_their_description_is_embedded_again() -> (
    None
):
    """An upgraded store: its intents' vectors say their goal from its next fold on, and the
    version that says so is kept with the fold's changes."""
    script, events = launch()
    script["l-4"] = Step(["Go/no-go review"], category="work", deadline=REVIEW)
    events.append(event("l-4", "Deck for the go/no-go review: add the load test", LATER, "note"))
    embedder = HashingEmbedder(256)
    config = EngineConfig()
    config.topics.split_min_members = 1000
    engine = FoldEngine(embedder, ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    for raw in events[:-1]:
        await engine.fold(memory, raw)
    intent = the_intent(memory)
    old = embedder.embed([intent.embed_text])[0]  # what an older version stored
    memory.index(NodeKind.INTENT).upsert(intent.id, old)
    del memory.meta[INTENT_VECTORS_KEY]

    result = await engine.fold(memory, events[-1])

    intent = the_intent(memory)
    assert np.allclose(vector_of(memory, intent.id), goal_vector(embedder, intent.title), atol=1e-6)
    (changes,) = [c for c in result.changes if INTENT_VECTORS_KEY in c.meta]
    assert (NodeKind.INTENT.value, intent.id) in changes.vectors
