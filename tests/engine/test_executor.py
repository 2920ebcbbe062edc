"""The plan executor: each op, whole-plan validation, near-duplicate concepts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from fold_helpers import concept_id, dump, run_plan

from schemas.errors import PlanRejectedError
from schemas.events import RawEvent
from schemas.graph import EDGE_PRIOR_WEIGHT, EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes, RemoveNode, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.engine import FoldEngine
from topologies.executor import time_node_id
from topologies.graph import decayed_weight
from topologies.memory import TenantMemory, event_node_id, stable_id

MakeEvent = Callable[..., RawEvent]


def new_concept(title: str, ref: str = "c1", event: str | None = None) -> list[AddNode | AddEdge]:
    ops: list[AddNode | AddEdge] = [AddNode(ref=ref, kind=NodeKind.CONCEPT, title=title)]
    if event is not None:
        ops.append(AddEdge(src=event, dst=ref, kind=EdgeKind.GROUNDS))
    return ops


def plan(*ops: object) -> UpdatePlan:
    return UpdatePlan(ops=list(ops), planner="test")  # type: ignore[arg-type]


# ------------------------------------------------------------------------ ADD_NODE
def test_add_node_creates_a_concept_with_a_stable_id_and_an_embedding(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    event = make_event("Quarterly taxes due", id="ev-1")
    ev = event_node_id("alice", "ev-1")
    scope = run_plan(engine, memory, event, plan(*new_concept("Quarterly tax filing", "tax", ev)))

    expected = stable_id("c", "alice", "ev-1", "tax")
    node = memory.graph.node(expected)
    assert node.kind == NodeKind.CONCEPT and node.inferred
    assert node.source_event_id == "ev-1"
    assert expected in memory.index(NodeKind.CONCEPT)
    assert scope.created == {expected}
    assert memory.graph.edge(ev, expected, EdgeKind.GROUNDS) is not None


def test_time_nodes_are_shared_per_minute(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    first, second = make_event("a", id="ev-1"), make_event("b", id="ev-2")
    anchor = first.ts + timedelta(days=30)
    for event in (first, second):
        ev = event_node_id("alice", event.id)
        run_plan(
            engine,
            memory,
            event,
            plan(
                AddNode(ref="t", kind=NodeKind.TIME, title="due", deadline=anchor),
                AddEdge(src="t", dst=ev, kind=EdgeKind.DEADLINE_FOR),
            ),
        )
    assert memory.graph.ids(NodeKind.TIME) == {time_node_id("alice", anchor)}
    assert len(list(memory.graph.out_edges(time_node_id("alice", anchor)))) == 2


# ------------------------------------------------------------------------ ADD_EDGE
def test_add_edge_uses_the_prior_weight_then_reinforces_an_existing_edge(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent, engine_config: EngineConfig
) -> None:
    first = make_event("Tax", id="ev-1", hours=0)
    run_plan(
        engine,
        memory,
        first,
        plan(
            *new_concept("Quarterly tax filing", "a"),
            *new_concept("Accountant meeting", "b")[:1],
            AddEdge(src="a", dst="b", kind=EdgeKind.CAUSES),
        ),
    )
    a, b = concept_id(memory, "Quarterly tax filing"), concept_id(memory, "Accountant meeting")
    edge = memory.graph.edge(a, b, EdgeKind.CAUSES)
    assert edge is not None and edge.w0 == EDGE_PRIOR_WEIGHT[EdgeKind.CAUSES] and edge.count == 1

    later = make_event("Tax again", id="ev-2", hours=24 * 10)
    run_plan(engine, memory, later, plan(AddEdge(src=a, dst=b, kind=EdgeKind.CAUSES)))
    again = memory.graph.edge(a, b, EdgeKind.CAUSES)
    assert again is not None
    cfg = engine_config.consolidation
    decayed = decayed_weight(edge, later.ts, cfg.decay_per_day)
    assert again.count == 2
    assert again.t_last == later.ts
    assert again.w0 == pytest.approx(decayed + cfg.reinforce_boost)
    assert len(list(memory.graph.out_edges(a, EdgeKind.CAUSES))) == 1


def test_reinforces_edge_bumps_the_concept_once_per_event(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    first = make_event("Tax", id="ev-1")
    run_plan(
        engine,
        memory,
        first,
        plan(*new_concept("Quarterly tax filing", "a", event_node_id("alice", "ev-1"))),
    )
    concept = concept_id(memory, "Quarterly tax filing")
    second = make_event("Tax again", id="ev-2")
    ev2 = event_node_id("alice", "ev-2")
    run_plan(
        engine,
        memory,
        second,
        plan(
            AddEdge(src=ev2, dst=concept, kind=EdgeKind.REINFORCES),
            AddEdge(src=ev2, dst=concept, kind=EdgeKind.REINFORCES),
        ),
    )
    assert memory.graph.node(concept).reinforcement == 1
    assert memory.graph.edge(ev2, concept, EdgeKind.REINFORCES) is not None


# ---------------------------------------------------------------------- UPDATE_NODE
def test_update_node_changes_fields_and_reembeds_a_new_title(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    run_plan(engine, memory, make_event("x", id="ev-1"), plan(*new_concept("Tax filing", "a")))
    concept = concept_id(memory, "Tax filing")
    before = memory.index(NodeKind.CONCEPT).get(concept)
    run_plan(
        engine,
        memory,
        make_event("y", id="ev-2"),
        plan(
            UpdateNode(
                id=concept, title="Marathon training", category="health", attrs={"note": "renamed"}
            )
        ),
    )
    node = memory.graph.node(concept)
    assert (node.title, node.category, node.attrs["note"]) == (
        "Marathon training",
        "health",
        "renamed",
    )
    after = memory.index(NodeKind.CONCEPT).get(concept)
    assert before is not None and after is not None and float(before @ after) < 0.5


def test_update_node_restating_the_title_and_text_does_not_embed_again(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    run_plan(engine, memory, make_event("x", id="ev-1"), plan(*new_concept("Tax filing", "a")))
    concept = concept_id(memory, "Tax filing")
    engine.embedder.forget()  # as after each batch: the title is not remembered
    calls = engine.embedder.calls
    same = UpdateNode(id=concept, title="Tax filing", attrs={"note": "seen again"})
    run_plan(engine, memory, make_event("y", id="ev-2"), plan(same))
    assert memory.graph.node(concept).attrs["note"] == "seen again"
    assert engine.embedder.calls == calls + 1  # the event's own text, not the title again
    renamed = UpdateNode(id=concept, title="Tax return")
    run_plan(engine, memory, make_event("z", id="ev-3"), plan(renamed))
    assert engine.embedder.calls == calls + 3


# ---------------------------------------------------------------------- MERGE_NODES
def test_merge_moves_edges_to_the_keeper_and_absorbed_ids_keep_resolving(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    ev1 = event_node_id("alice", "ev-1")
    run_plan(
        engine,
        memory,
        make_event("x", id="ev-1"),
        plan(*new_concept("Tax filing", "a", ev1), *new_concept("Marathon training", "b", ev1)),
    )
    keep, gone = concept_id(memory, "Tax filing"), concept_id(memory, "Marathon training")
    run_plan(engine, memory, make_event("y", id="ev-2"), plan(MergeNodes(keep=keep, absorb=[gone])))

    assert gone not in memory.graph and gone not in memory.index(NodeKind.CONCEPT)
    assert memory.graph.resolve(gone) == keep
    assert memory.graph.node(gone).id == keep
    assert memory.graph.edge(ev1, keep, EdgeKind.GROUNDS) is not None
    assert memory.graph.node(keep).attrs["merged_from"] == [gone]
    # a later plan may still name the absorbed id
    run_plan(
        engine,
        memory,
        make_event("z", id="ev-3"),
        plan(AddEdge(src=event_node_id("alice", "ev-3"), dst=gone, kind=EdgeKind.REINFORCES)),
    )
    assert memory.graph.edge(event_node_id("alice", "ev-3"), keep, EdgeKind.REINFORCES) is not None


# ---------------------------------------------------------------------- REMOVE_NODE
def test_remove_node_drops_the_node_its_edges_and_its_vector(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    ev1 = event_node_id("alice", "ev-1")
    run_plan(engine, memory, make_event("x", id="ev-1"), plan(*new_concept("Tax filing", "a", ev1)))
    concept = concept_id(memory, "Tax filing")
    run_plan(engine, memory, make_event("y", id="ev-2"), plan(RemoveNode(id=concept)))
    assert concept not in memory.graph
    assert concept not in memory.index(NodeKind.CONCEPT)
    assert list(memory.graph.out_edges(ev1)) == []


# ----------------------------------------------------------------- near duplicates
def test_a_near_duplicate_concept_becomes_a_reinforcement(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    ev1, ev2 = event_node_id("alice", "ev-1"), event_node_id("alice", "ev-2")
    run_plan(
        engine, memory, make_event("x", id="ev-1"), plan(*new_concept("Passport renewal", "a", ev1))
    )
    original = concept_id(memory, "Passport renewal")
    scope = run_plan(
        engine,
        memory,
        make_event("y", id="ev-2"),
        plan(*new_concept("passport renewal", "dup", ev2)),
    )

    assert memory.graph.count(NodeKind.CONCEPT) == 1
    assert scope.created == set() and original in scope.reinforced
    assert memory.graph.edge(ev2, original, EdgeKind.REINFORCES) is not None
    assert memory.graph.edge(ev2, original, EdgeKind.GROUNDS) is None
    assert memory.graph.node(original).reinforcement == 1


# ------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("ops", "reason"),
    [
        ([AddEdge(src="c1", dst="nowhere", kind=EdgeKind.RELATED_TO)], "unknown node id"),
        (
            [
                AddNode(ref="c1", kind=NodeKind.CONCEPT, title="Tax"),
                AddEdge(src="EVENT", dst="c1", kind=EdgeKind.TRIGGERS),
            ],
            "TRIGGERS cannot go from EVENT to CONCEPT",
        ),
        ([UpdateNode(id="EVENT", title="rewritten")], "EVENT nodes are immutable"),
        ([RemoveNode(id="EVENT")], "EVENT nodes cannot be removed"),
        ([AddNode(ref="e", kind=NodeKind.EVENT, title="fake")], "EVENT nodes come only"),
        (
            [AddNode(ref="c1", kind=NodeKind.CONCEPT, title="Tax", grounded_in=["ev-ghost"])],
            "grounded_in names unknown id 'ev-ghost'",
        ),
        (
            [
                AddNode(ref="c1", kind=NodeKind.CONCEPT, title="Tax filing"),
                AddEdge(src="EVENT", dst="c1", kind=EdgeKind.GROUNDS),
                AddNode(ref="c2", kind=NodeKind.CONCEPT, title="Marathon training"),
                AddNode(ref="i", kind=NodeKind.INTENT, title="Do things"),
                AddEdge(src="c1", dst="i", kind=EdgeKind.TRIGGERS),
                AddEdge(src="c2", dst="i", kind=EdgeKind.TRIGGERS),
            ],
            "needs TRIGGERS from at least 2 concepts with evidence, has 1",
        ),
    ],
    ids=[
        "unknown-id",
        "illegal-edge",
        "event-immutable",
        "event-not-removable",
        "no-event-nodes",
        "dangling-grounded-in",
        "intent-one-evidenced-concept",
    ],
)
def test_invalid_plans_are_rejected_whole_and_change_nothing(
    engine: FoldEngine,
    memory: TenantMemory,
    make_event: MakeEvent,
    ops: list[object],
    reason: str,
) -> None:
    event = make_event("Taxes", id="ev-1")
    engine.ingest(memory, event)
    ev = event_node_id("alice", "ev-1")
    concrete = [_bind(op, ev) for op in ops]
    before = dump(memory)
    with pytest.raises(PlanRejectedError, match=reason):
        run_plan(engine, memory, event, plan(*concrete))
    assert dump(memory) == before


def _bind(op: object, event_node: str) -> object:
    """Replace the placeholder "EVENT" by the real event node id."""
    fields = {
        k: (event_node if k in ("src", "dst", "id") and v == "EVENT" else v)
        for k, v in vars(op).items()
    }
    return type(op)(**fields)


def test_plan_status_change_must_follow_the_lifecycle(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    ev1 = event_node_id("alice", "ev-1")
    run_plan(
        engine,
        memory,
        make_event("x", id="ev-1"),
        plan(
            *new_concept("Tax filing", "a", ev1),
            *new_concept("Marathon training", "b", ev1),
            AddNode(ref="i", kind=NodeKind.INTENT, title="Plan the year"),
            AddEdge(src="a", dst="i", kind=EdgeKind.TRIGGERS),
            AddEdge(src="b", dst="i", kind=EdgeKind.TRIGGERS),
            UpdateNode(id="i", status="resolved"),
        ),
    )
    (intent,) = memory.graph.ids(NodeKind.INTENT)
    assert memory.graph.node(intent).status == "resolved"
    with pytest.raises(PlanRejectedError, match="cannot go from resolved to pending"):
        run_plan(
            engine,
            memory,
            make_event("y", id="ev-2"),
            plan(UpdateNode(id=intent, status="pending")),
        )


def test_an_intent_backed_by_two_evidenced_concepts_is_accepted(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    ev1 = event_node_id("alice", "ev-1")
    scope = run_plan(
        engine,
        memory,
        make_event("x", id="ev-1"),
        plan(
            *new_concept("Tax filing", "a", ev1),
            *new_concept("Marathon training", "b", ev1),
            AddNode(ref="i", kind=NodeKind.INTENT, title="Plan the year"),
            AddEdge(src="a", dst="i", kind=EdgeKind.TRIGGERS),
            AddEdge(src="b", dst="i", kind=EdgeKind.TRIGGERS),
        ),
    )
    (intent,) = memory.graph.ids(NodeKind.INTENT)
    assert memory.graph.node(intent).status == "pending"
    assert scope.intent_changes == {intent: None}


def test_apply_outside_a_transaction_is_refused(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent
) -> None:
    from topologies.scope import FoldScope

    event = make_event("x", id="ev-1")
    engine.ingest(memory, event)
    scope = FoldScope("alice", "ev-1", event_node_id("alice", "ev-1"), event.ts)
    with pytest.raises(RuntimeError, match="open transaction"):
        engine.executor.apply(memory, plan(*new_concept("Tax", "a")), scope)
