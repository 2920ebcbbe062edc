"""Idempotency by event id: at-least-once delivery gives effectively-once state."""

from __future__ import annotations

from collections.abc import Callable

from fold_helpers import ScriptedPlanner, Step, concept_id, dump

from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.embedding import HashingEmbedder
from topologies.engine import EVENTS_FOLDED_KEY, FoldEngine
from topologies.memory import event_node_id

MakeEvent = Callable[..., RawEvent]

SCRIPT = {
    "ev-1": Step(["Passport renewal"]),
    "ev-2": Step(["Passport renewal"]),
}


def make_engine(embedder: HashingEmbedder) -> tuple[FoldEngine, ScriptedPlanner]:
    planner = ScriptedPlanner(SCRIPT)
    return FoldEngine(embedder, planner), planner


async def test_the_same_event_twice_is_folded_once(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, planner = make_engine(embedder)
    memory = engine.new_memory("alice")
    first, second = make_event("Passport", id="ev-1"), make_event("Passport again", id="ev-2")
    await engine.fold(memory, first)
    await engine.fold(memory, second)
    concept = concept_id(memory, "Passport renewal")
    assert memory.graph.node(concept).reinforcement == 1
    before, calls = dump(memory), planner.calls

    again = await engine.fold(memory, second)

    assert again.status == "duplicate" and again.changes == [] and again.messages == []
    assert planner.calls == calls  # not even planned again
    assert dump(memory) == before
    assert memory.graph.count(NodeKind.EVENT) == 2
    assert memory.graph.node(concept).reinforcement == 1
    assert memory.meta[EVENTS_FOLDED_KEY] == 2


async def test_the_stored_event_never_changes_when_its_id_returns_with_other_content(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, _ = make_engine(embedder)
    memory = engine.new_memory("alice")
    await engine.fold(memory, make_event("Passport", id="ev-1"))
    result = await engine.fold(memory, make_event("Something else entirely", id="ev-1"))
    assert result.event_id.startswith("ev-1#rev-")  # a revision, see test_revisions.py
    assert memory.graph.node(event_node_id("alice", "ev-1")).title == "Passport"


async def test_a_stored_but_unfolded_event_is_folded_exactly_once(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, _ = make_engine(embedder)
    memory = engine.new_memory("alice")
    event = make_event("Passport", id="ev-1")
    engine.ingest(memory, event)  # then a crash before the fold
    assert memory.pending_events() == ["ev-1"]

    result = await engine.fold(memory, event)
    assert result.status == "folded"
    assert memory.event_state("ev-1") == "folded"
    assert memory.graph.count(NodeKind.EVENT) == 1
    assert memory.graph.count(NodeKind.CONCEPT) == 1
    assert (await engine.fold(memory, event)).status == "duplicate"
    assert memory.meta[EVENTS_FOLDED_KEY] == 1


async def test_duplicate_ingest_is_reported_and_changes_nothing(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, _ = make_engine(embedder)
    memory = engine.new_memory("alice")
    event = make_event("Passport", id="ev-1")
    first = engine.ingest(memory, event)
    before = dump(memory)
    second = engine.ingest(memory, event)
    assert not first.duplicate and second.duplicate and second.changes is None
    assert dump(memory) == before
