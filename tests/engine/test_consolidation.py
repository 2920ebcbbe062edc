"""The four structural debts: accumulation, compression, decay, completion (SPEC 2.5)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from fold_helpers import ScriptedPlanner, concept_id, run_plan

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, UpdatePlan
from topologies.config import ConsolidationConfig, EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.graph import decayed_weight
from topologies.memory import TenantMemory, event_node_id

MakeEvent = Callable[..., RawEvent]


def make_engine(embedder: HashingEmbedder, **consolidation: float) -> FoldEngine:
    config = EngineConfig(consolidation=ConsolidationConfig(**consolidation))
    return FoldEngine(embedder, ScriptedPlanner({}), config)


def concepts_plan(event: RawEvent, *titles: str, reinforce: tuple[str, ...] = ()) -> UpdatePlan:
    ev = event_node_id(event.tenant, event.id)
    ops: list[AddNode | AddEdge] = []
    for i, title in enumerate(titles):
        ops += [
            AddNode(ref=f"c{i}", kind=NodeKind.CONCEPT, title=title),
            AddEdge(src=ev, dst=f"c{i}", kind=EdgeKind.GROUNDS),
        ]
    ops += [AddEdge(src=ev, dst=cid, kind=EdgeKind.REINFORCES) for cid in reinforce]
    return UpdatePlan(ops=list(ops))


def fold(
    engine: FoldEngine,
    memory: TenantMemory,
    event: RawEvent,
    *titles: str,
    reinforce: tuple[str, ...] = (),
    consolidate: bool = True,
) -> None:
    plan = concepts_plan(event, *titles, reinforce=reinforce)
    run_plan(engine, memory, event, plan, consolidate=consolidate)


# -------------------------------------------------------------------- accumulation
def test_concepts_activated_by_one_event_get_related_and_strengthen_with_repetition(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Passport renewal", "Lisbon trip")
    a, b = sorted([concept_id(memory, "Passport renewal"), concept_id(memory, "Lisbon trip")])
    first = memory.graph.edge(a, b, EdgeKind.RELATED_TO)
    assert first is not None and first.count == 1

    fold(engine, memory, make_event("e2", id="ev-2"), reinforce=(a, b))
    second = memory.graph.edge(a, b, EdgeKind.RELATED_TO)
    assert second is not None and second.count == 2 and second.w0 > first.w0
    assert memory.graph.edge(b, a, EdgeKind.RELATED_TO) is None  # one edge, not two
    assert memory.graph.node(a).reinforcement == 1 == memory.graph.node(b).reinforcement


def test_a_single_concept_event_creates_no_coactivation_edge(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Passport renewal")
    fold(engine, memory, make_event("e2", id="ev-2"), "Lisbon trip")
    assert memory.graph.edge_count(EdgeKind.RELATED_TO) == 0


# --------------------------------------------------------------------- compression
def test_similar_concepts_merge_into_the_older_one_and_ids_keep_resolving(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder, merge_similarity=0.8, near_duplicate_title=0.95)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Quarterly tax filing")
    old = concept_id(memory, "Quarterly tax filing")
    fold(engine, memory, make_event("e2", id="ev-2"), "Quarterly tax filings")

    assert memory.graph.ids(NodeKind.CONCEPT) == {old}
    (absorbed,) = memory.graph.aliases
    assert memory.graph.resolve(absorbed) == old
    assert absorbed not in memory.index(NodeKind.CONCEPT)
    # both grounding events now ground the keeper
    grounding = {e.src for e in memory.graph.in_edges(old, EdgeKind.GROUNDS)}
    assert grounding == {event_node_id("alice", "ev-1"), event_node_id("alice", "ev-2")}


def test_the_more_accessed_concept_keeps_even_when_younger(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder, merge_similarity=0.8, near_duplicate_title=0.95)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Quarterly tax filing")
    old = concept_id(memory, "Quarterly tax filing")
    fold(engine, memory, make_event("e2", id="ev-2"), "Quarterly tax filings", consolidate=False)
    young = concept_id(memory, "Quarterly tax filings")
    memory.begin()
    memory.graph.update_node(young, access_count=5)
    memory.commit()

    fold(engine, memory, make_event("e3", id="ev-3"), reinforce=(young,))
    assert memory.graph.ids(NodeKind.CONCEPT) == {young}
    assert memory.graph.resolve(old) == young


def test_compression_only_looks_at_what_the_fold_touched(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder, merge_similarity=0.8, near_duplicate_title=0.95)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Quarterly tax filing", consolidate=False)
    fold(engine, memory, make_event("e2", id="ev-2"), "Quarterly tax filings", consolidate=False)
    fold(engine, memory, make_event("e3", id="ev-3"), "Marathon training")
    assert memory.graph.count(NodeKind.CONCEPT) == 3  # the untouched pair is left alone

    fold(
        engine,
        memory,
        make_event("e4", id="ev-4"),
        reinforce=(concept_id(memory, "Quarterly tax filing"),),
    )
    assert memory.graph.count(NodeKind.CONCEPT) == 2


def test_concepts_below_the_merge_similarity_stay_apart(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)  # default merge_similarity 0.86 > cos 0.855 of this pair
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Quarterly tax filing")
    fold(engine, memory, make_event("e2", id="ev-2"), "Quarterly tax filings")
    assert memory.graph.count(NodeKind.CONCEPT) == 2


# --------------------------------------------------------------------------- decay
def test_edge_weight_decays_lazily_and_reinforcement_refreshes_it(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    first = make_event("e1", id="ev-1", hours=0)
    fold(engine, memory, first, "Passport renewal", "Lisbon trip")
    a, b = sorted(memory.graph.ids(NodeKind.CONCEPT))
    edge = memory.graph.edge(a, b, EdgeKind.RELATED_TO)
    assert edge is not None
    month = first.ts + timedelta(days=30)
    assert decayed_weight(edge, month, 0.02) == pytest.approx(0.4 * 2.718281828 ** (-0.6))
    assert memory.graph.edge(a, b, EdgeKind.RELATED_TO) == edge  # nothing rewritten

    fold(engine, memory, make_event("e2", id="ev-2", hours=24 * 30), reinforce=(a, b))
    refreshed = memory.graph.edge(a, b, EdgeKind.RELATED_TO)
    assert refreshed is not None and refreshed.t_last == month
    assert refreshed.w0 == pytest.approx(decayed_weight(edge, month, 0.02) + 0.2)


def test_sweep_prunes_faded_associations_but_never_provenance(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    first = make_event("Passport and Lisbon", id="ev-1", hours=0)
    ev1 = event_node_id("alice", "ev-1")
    run_plan(
        engine,
        memory,
        first,
        UpdatePlan(
            ops=[
                AddNode(ref="a", kind=NodeKind.CONCEPT, title="Passport renewal"),
                AddEdge(src=ev1, dst="a", kind=EdgeKind.GROUNDS),
                AddNode(ref="b", kind=NodeKind.CONCEPT, title="Lisbon trip"),
                AddEdge(src=ev1, dst="b", kind=EdgeKind.GROUNDS),
                AddEdge(src="a", dst="b", kind=EdgeKind.RELATED_TO),
                AddEdge(src="a", dst="b", kind=EdgeKind.CAUSES),
                AddNode(
                    ref="t", kind=NodeKind.TIME, title="d", deadline=first.ts + timedelta(days=40)
                ),
                AddEdge(src="t", dst="b", kind=EdgeKind.DEADLINE_FOR),
                AddNode(ref="i", kind=NodeKind.INTENT, title="Renew before the trip"),
                AddEdge(src="a", dst="i", kind=EdgeKind.TRIGGERS),
                AddEdge(src="b", dst="i", kind=EdgeKind.TRIGGERS),
            ]
        ),
    )
    total = memory.graph.edge_count()
    assert engine.consolidator.sweep(memory, first.ts + timedelta(days=10)) == 0

    changes = engine.sweep(memory, first.ts + timedelta(days=200))
    pruned = {key[2] for key, value in changes.edges.items() if value is None}
    assert pruned == {EdgeKind.RELATED_TO, EdgeKind.CAUSES}
    assert memory.graph.edge_count() == total - 2
    kept = {e.kind for e in memory.graph.edges()}
    assert kept == {EdgeKind.GROUNDS, EdgeKind.DEADLINE_FOR, EdgeKind.TRIGGERS}


def test_sweep_prunes_a_bounded_batch_weakest_first(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    first = make_event("x", id="ev-1", hours=0)
    run_plan(
        engine,
        memory,
        first,
        UpdatePlan(
            ops=[
                AddNode(ref="a", kind=NodeKind.CONCEPT, title="Passport renewal"),
                AddNode(ref="b", kind=NodeKind.CONCEPT, title="Lisbon trip"),
                AddEdge(src="a", dst="b", kind=EdgeKind.RELATED_TO),  # 0.4: weakest
                AddEdge(src="a", dst="b", kind=EdgeKind.CAUSES),  # 0.7
            ]
        ),
    )
    later = first.ts + timedelta(days=200)
    memory.begin()
    assert engine.consolidator.sweep(memory, later, limit=1) == 1
    assert [e.kind for e in memory.graph.edges()] == [EdgeKind.CAUSES]
    assert engine.consolidator.sweep(memory, later, limit=1) == 1
    assert engine.consolidator.sweep(memory, later, limit=1) == 0
    memory.commit()


# ---------------------------------------------------------------------- completion
def test_an_isolated_concept_is_linked_to_its_nearest_similar_concepts(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Passport renewal office")
    fold(engine, memory, make_event("e2", id="ev-2"), "Dentist visit")
    fold(engine, memory, make_event("e3", id="ev-3"), "Passport renewal form")
    office = concept_id(memory, "Passport renewal office")
    form = concept_id(memory, "Passport renewal form")
    dentist = concept_id(memory, "Dentist visit")

    edge = memory.graph.edge(form, office, EdgeKind.RELATED_TO)
    assert edge is not None and "kNN completion" in edge.attrs["reasoning"]
    assert memory.graph.neighbors(dentist) == {event_node_id("alice", "ev-2")}


def test_a_concept_with_concept_edges_is_not_completed(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Passport renewal office")
    fold(engine, memory, make_event("e2", id="ev-2"), "Passport renewal form", "Lisbon trip")
    office = concept_id(memory, "Passport renewal office")
    form = concept_id(memory, "Passport renewal form")
    assert memory.graph.edge(form, office, EdgeKind.RELATED_TO) is None
    assert memory.graph.edge(office, form, EdgeKind.RELATED_TO) is None


def test_completion_respects_k(embedder: HashingEmbedder, make_event: MakeEvent) -> None:
    engine = make_engine(embedder, completion_k=1)
    memory = engine.new_memory("alice")
    fold(engine, memory, make_event("e1", id="ev-1"), "Passport renewal office")
    fold(engine, memory, make_event("e2", id="ev-2"), "Passport renewal desk")
    fold(engine, memory, make_event("e3", id="ev-3"), "Passport renewal form")
    form = concept_id(memory, "Passport renewal form")
    assert len(list(memory.graph.out_edges(form, EdgeKind.RELATED_TO))) == 1
