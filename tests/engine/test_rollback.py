"""Rollback restores graph, indexes, aliases, meta and event states exactly."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fold_helpers import ScriptedPlanner, Step, concept_id, dump, run_plan

from schemas.errors import PlanRejectedError
from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes, RemoveNode, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, node_to_event
from topologies.memory import TenantMemory, event_node_id
from topologies.planner import PLANNED_BY_KEY, PlanRequest

MakeEvent = Callable[..., RawEvent]


def seeded(engine: FoldEngine, make_event: MakeEvent) -> TenantMemory:
    """A small graph: two grounded concepts linked, one FACT made by event ev-1."""
    memory = engine.new_memory("alice")
    ev1 = event_node_id("alice", "ev-1")
    run_plan(
        engine,
        memory,
        make_event("Taxes and running", id="ev-1"),
        UpdatePlan(
            ops=[
                AddNode(ref="a", kind=NodeKind.CONCEPT, title="Quarterly tax filing"),
                AddEdge(src=ev1, dst="a", kind=EdgeKind.GROUNDS),
                AddNode(ref="b", kind=NodeKind.CONCEPT, title="Marathon training"),
                AddEdge(src=ev1, dst="b", kind=EdgeKind.GROUNDS),
                AddEdge(src="a", dst="b", kind=EdgeKind.RELATED_TO),
                AddNode(ref="f", kind=NodeKind.FACT, title="Taxes are due on the 15th"),
            ]
        ),
        consolidate=True,
    )
    return memory


def test_a_plan_failing_midway_is_rolled_back_entirely(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = seeded(engine, make_event)
    a = concept_id(memory, "Quarterly tax filing")
    b = concept_id(memory, "Marathon training")
    before = dump(memory)
    # Valid as a whole, but the last op re-derives the id of the FACT that ev-1 already created
    # (same event id, same ref): applying it fails after every other op has been applied.
    failing = UpdatePlan(
        ops=[
            AddNode(ref="n", kind=NodeKind.CONCEPT, title="Gym membership"),
            AddEdge(src=a, dst=b, kind=EdgeKind.RELATED_TO),
            UpdateNode(id=a, title="Tax paperwork", attrs={"x": 1}),
            MergeNodes(keep=a, absorb=[b]),
            RemoveNode(id="n"),
            AddNode(ref="f", kind=NodeKind.FACT, title="duplicate fact"),
        ]
    )
    replay = node_to_event(memory.graph.node(event_node_id("alice", "ev-1")))  # re-delivered
    with pytest.raises(PlanRejectedError, match="already exists"):
        run_plan(engine, memory, replay, failing)
    assert dump(memory) == before


def test_rollback_restores_meta_event_states_aliases_and_vectors(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = seeded(engine, make_event)
    a = concept_id(memory, "Quarterly tax filing")
    b = concept_id(memory, "Marathon training")
    before = dump(memory)
    memory.begin()
    memory.set_meta("intent_threshold:general", 9.0)
    memory.set_meta("clock", None)
    memory.set_event_state("ev-1", None)
    memory.set_event_state("ev-new", "stored")
    memory.index(NodeKind.CONCEPT).upsert(a, [1.0] * 256)
    memory.graph.update_node(b, access_count=42)
    from topologies.scope import FoldScope

    scope = FoldScope("alice", "", None, make_event("now").ts)
    engine.executor.merge(memory, scope, a, b)
    memory.graph.remove_node(a)
    memory.graph.set_alias("elsewhere", a)
    memory.rollback()
    assert dump(memory) == before
    assert memory.graph.resolve(b) == b


async def test_a_planner_plan_that_fails_leaves_the_same_state_as_an_empty_plan(
    embedder: HashingEmbedder, engine_config: EngineConfig, make_event: MakeEvent
) -> None:
    class Broken:
        name = "broken"

        async def plan(self, request: PlanRequest) -> UpdatePlan:
            return UpdatePlan(
                ops=[
                    AddNode(ref="c", kind=NodeKind.CONCEPT, title="Half applied"),
                    AddEdge(src="c", dst="ghost", kind=EdgeKind.RELATED_TO),
                ]
            )

    event = make_event("Lisbon trip", id="ev-1")
    broken = FoldEngine(embedder, Broken(), engine_config)
    empty = FoldEngine(embedder, ScriptedPlanner({"ev-1": Step()}), engine_config)
    m1, m2 = broken.new_memory("alice"), empty.new_memory("alice")

    result = await broken.fold(m1, event)
    await empty.fold(m2, event)

    assert result.status == "empty" and "unknown node id 'ghost'" in (result.error or "")
    # the fold counts who planned the event: the engine's empty plan, the scripted planner's
    assert m1.meta.pop(PLANNED_BY_KEY) == {"empty": 1}
    assert m2.meta.pop(PLANNED_BY_KEY) == {"scripted": 1}
    assert dump(m1) == dump(m2)
    assert m1.event_state("ev-1") == "folded"
