"""A known event id with new content (edited message, moved or cancelled meeting) is a revision."""

from __future__ import annotations

from collections.abc import Callable

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import event_node_id


def engine(embedder: HashingEmbedder) -> FoldEngine:
    from topologies.config import EngineConfig

    config = EngineConfig()
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def test_same_id_same_content_is_a_duplicate_even_when_received_again(
    embedder: HashingEmbedder, make_event: Callable[..., RawEvent]
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    event = make_event("Standup", "Daily standup at 9:30", id="cal-1")
    await eng.fold(memory, event)
    again = await eng.fold(memory, event.stamped())
    assert again.status == "duplicate"
    assert memory.graph.count(NodeKind.EVENT) == 1


async def test_changed_content_under_a_known_id_folds_as_a_revision_that_supersedes(
    embedder: HashingEmbedder, make_event: Callable[..., RawEvent]
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    original = make_event("Dentist", "Crown fitting Tue 10:00", id="cal-7", source="calendar")
    await eng.fold(memory, original)
    cancelled = original.model_copy(
        update={"title": "Cancelled: Dentist", "attrs": {"status": "cancelled"}}
    )
    result = await eng.fold(memory, cancelled)

    assert result.status in ("folded", "fallback")
    assert result.event_id.startswith("cal-7#rev-")
    new = memory.graph.node(result.node_id)
    old = memory.graph.node(event_node_id("alice", "cal-7"))
    assert new.supersedes == old.id and old.superseded_by == new.id
    assert memory.graph.edge(new.id, old.id, EdgeKind.SUPERSEDES) is not None
    assert memory.event_state(result.event_id) == "folded"

    # re-importing either version later adds nothing
    assert (await eng.fold(memory, original)).status == "duplicate"
    assert (await eng.fold(memory, cancelled)).status == "duplicate"
    assert memory.graph.count(NodeKind.EVENT) == 2


async def test_revisions_chain_to_the_latest_version(
    embedder: HashingEmbedder, make_event: Callable[..., RawEvent]
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    first = make_event("Lunch with Mia", "Friday 12:00", id="chat-3", source="chat")
    await eng.fold(memory, first)
    second = await eng.fold(memory, first.model_copy(update={"body": "Friday 13:00"}))
    third = await eng.fold(memory, first.model_copy(update={"body": "Friday 13:30"}))
    assert memory.graph.node(third.node_id).supersedes == second.node_id
    assert memory.graph.node(second.node_id).supersedes == event_node_id("alice", "chat-3")


async def test_a_stored_revision_replayed_after_a_crash_folds_once_and_stays_one_revision(
    embedder: HashingEmbedder, make_event: Callable[..., RawEvent]
) -> None:
    from topologies.engine import node_to_event

    eng = engine(embedder)
    memory = eng.new_memory("alice")
    first = make_event("Lunch with Mia", "Friday 12:00", id="chat-9", source="chat")
    await eng.fold(memory, first)
    stored = eng.ingest(memory, first.model_copy(update={"body": "Friday 13:00"}))
    assert stored.event is not None and memory.event_state(stored.event.id) == "stored"
    # a crash before the fold; recovery rebuilds the event from its stored node
    replayed = node_to_event(memory.graph.node(stored.node_id))
    result = await eng.fold(memory, replayed)
    assert result.event_id == stored.event.id and result.status != "duplicate"
    assert memory.graph.count(NodeKind.EVENT) == 2
