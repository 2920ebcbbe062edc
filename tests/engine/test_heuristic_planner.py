"""The heuristic planner end to end through FoldEngine (HashingEmbedder, no LLM)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from schemas.events import RawEvent
from schemas.graph import EdgeKind, Node, NodeKind
from schemas.plans import AddEdge, AddNode
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.entities import rebuild_entity_index
from topologies.executor import PlanExecutor
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id
from topologies.scope import FoldScope

MakeEvent = Callable[..., RawEvent]

LEAK_1 = (
    "Bathroom ceiling leak",
    "Water is dripping from the bathroom ceiling again, call the landlord",
)
LEAK_2 = ("Bathroom ceiling leak worse", "The bathroom ceiling leak is worse, water on the floor")
LEAK_3 = (
    "Landlord about the bathroom ceiling leak",
    "Landlord says the ceiling leak in the bathroom gets fixed",
)
PASTA = ("Pasta recipe", "Boil spaghetti, add garlic, olive oil and chili flakes")


@pytest.fixture
def config() -> EngineConfig:
    # HashingEmbedder cosines are lower than MiniLM's: tests use their own thresholds.
    return EngineConfig(assign_similarity=0.35, pair_similarity=0.3)


@pytest.fixture
def engine(embedder: HashingEmbedder, config: EngineConfig) -> FoldEngine:
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def fold_all(engine: FoldEngine, memory: TenantMemory, events: list[RawEvent]) -> None:
    for event in events:
        result = await engine.fold(memory, event)
        assert result.status == "folded", result.error
        assert result.planner == "heuristic"


def concepts(memory: TenantMemory) -> list[Node]:
    return sorted(memory.graph.nodes(NodeKind.CONCEPT), key=lambda n: n.id)


def evidence(memory: TenantMemory, concept_id: str) -> set[str]:
    kinds = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
    return {e.src for e in memory.graph.in_edges(concept_id) if e.kind in kinds}


async def test_similar_events_form_one_concept_with_a_sensible_label(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    first, second = make_event(*LEAK_1), make_event(*LEAK_2)
    await fold_all(engine, memory, [first, second])
    (concept,) = concepts(memory)
    words = set(concept.title.lower().split())
    assert words & {"bathroom", "ceiling", "leak"}, concept.title
    assert 1 <= len(concept.title.split()) <= 4
    assert concept.category == "home"
    ids = {event_node_id("alice", first.id), event_node_id("alice", second.id)}
    assert evidence(memory, concept.id) == ids
    assert all(memory.graph.edge(concept.id, i, EdgeKind.DERIVED_FROM) for i in ids)
    assert len(memory.index("POOL")) == 0  # both events left the clustering pool


async def test_a_third_similar_event_reinforces_instead_of_duplicating(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [make_event(*LEAK_1), make_event(*LEAK_2)])
    (before,) = concepts(memory)
    third = make_event(*LEAK_3)
    await fold_all(engine, memory, [third])
    (after,) = concepts(memory)
    assert after.id == before.id
    assert after.reinforcement == before.reinforcement + 1
    edge = memory.graph.edge(event_node_id("alice", third.id), after.id, EdgeKind.REINFORCES)
    assert edge is not None and "cosine" in edge.attrs["reasoning"]


async def test_unrelated_events_stay_apart(engine: FoldEngine, make_event: MakeEvent) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [make_event(*LEAK_1), make_event(*PASTA)])
    assert concepts(memory) == []
    assert len(memory.index("POOL")) == 2  # both wait, unassigned, for a similar event


async def test_shared_ticket_links_events_with_triggers_or_causes(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    first = make_event("FLX-142 price feed late", "Havelstrom feed for FLX-142 arrives late")
    second = make_event(
        "FLX-142 fallback merged", "Ruben merged the FLX-142 fallback for Havelstrom"
    )
    third = make_event(
        "Demo moved", "Havelstrom demo moved because FLX-142 broke staging after the deploy failed"
    )
    await fold_all(engine, memory, [first, second, third])
    ev1, ev2, ev3 = (event_node_id("alice", e.id) for e in (first, second, third))
    trig = memory.graph.edge(ev1, ev2, EdgeKind.TRIGGERS)
    assert trig is not None and "flx-142" in trig.attrs["reasoning"]
    assert memory.graph.edge(ev1, ev3, EdgeKind.CAUSES) is not None
    assert memory.graph.edge(ev2, ev3, EdgeKind.CAUSES) is not None
    assert memory.graph.edge(ev3, ev1, EdgeKind.CAUSES) is None  # earlier -> later only


async def test_a_shared_sender_alone_does_not_link_unrelated_topics(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    who = ["Farida Osei <farida@wattwerk.de>"]
    await fold_all(engine, memory, [
        make_event("Quarterly budget", "numbers for finance", participants=who),
        make_event("Cake", "bring strawberries tomorrow", participants=who),
    ])  # fmt: skip
    assert memory.graph.edge_count(EdgeKind.TRIGGERS) == 0


async def test_dates_and_deadlines_become_time_nodes(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    event = make_event(
        "Go/no-go deck", "Send the deck by Wednesday 18 Nov, 12:00. Review is Thu 19 Nov.", hours=0
    )  # 2026-11-02 09:00 UTC, a Monday
    await fold_all(engine, memory, [event])
    times = {n.title: n for n in memory.graph.nodes(NodeKind.TIME)}
    assert set(times) == {"Deadline 2026-11-18 12:00", "Date 2026-11-19"}
    deadline = times["Deadline 2026-11-18 12:00"]
    assert deadline.deadline == datetime(2026, 11, 18, 12, 0, tzinfo=UTC)
    ev = event_node_id("alice", event.id)
    for node in times.values():
        assert memory.graph.edge(node.id, ev, EdgeKind.DEADLINE_FOR) is not None


async def test_relative_deadline_follows_the_event_time(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    event = make_event("Gift money", "Please PayPal me 25 EUR by Friday", hours=48)  # Wednesday
    await fold_all(engine, memory, [event])
    (time_node,) = memory.graph.nodes(NodeKind.TIME)
    assert time_node.deadline == datetime(2026, 11, 6, 0, 0, tzinfo=UTC)


async def test_a_deadline_attaches_to_the_concept_the_event_joined(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [make_event(*LEAK_1), make_event(*LEAK_2)])
    (concept,) = concepts(memory)
    title, body = LEAK_3
    await fold_all(engine, memory, [make_event(title, body + " by 20 Nov")])
    (time_node,) = memory.graph.nodes(NodeKind.TIME)
    assert memory.graph.edge(time_node.id, concept.id, EdgeKind.DEADLINE_FOR) is not None


async def test_concepts_connect_through_entity_linked_events(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [
        make_event("FLX-142 staging deploy failed", "rc1 staging deploy failed on FLX-142"),
        make_event("FLX-142 staging deploy failed again", "staging deploy of rc1 failed, FLX-142"),
        make_event("Partner demo slides", "prepare partner demo slides for the tariff screen"),
        make_event("Partner demo slides review", "review partner demo slides tariff screen"),
        make_event("Partner demo slides moved", "partner demo slides moved because FLX-142 "
                   "staging failed, tariff screen demo"),
    ])  # fmt: skip
    staging, demo = sorted(concepts(memory), key=lambda n: "demo" in n.title.lower())
    assert memory.graph.edge(staging.id, demo.id, EdgeKind.CAUSES) is not None


async def test_plans_are_grounded_and_valid(
    embedder: HashingEmbedder, config: EngineConfig, engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [make_event(*LEAK_1)])
    event = make_event(LEAK_2[0], LEAK_2[1] + " Plumber comes tomorrow.")
    engine.ingest(memory, event)
    planner = HeuristicPlanner(embedder, config)
    node_id = event_node_id("alice", event.id)
    from topologies.context import assemble_context
    from topologies.planner import PlanRequest

    vector = memory.index(NodeKind.EVENT).get(node_id)
    assert vector is not None
    now = event.ts
    context = assemble_context(memory, vector, node_id, now, config.context)
    plan = await planner.plan(
        PlanRequest(event, memory.graph.node(node_id), vector, context, memory, now)
    )
    assert plan.planner == "heuristic" and plan.ops
    refs = [op.ref for op in plan.ops if isinstance(op, AddNode)]
    assert refs == [f"n{i}" for i in range(1, len(refs) + 1)]
    assert all(op.reasoning and op.grounded_in[0] == event.id for op in plan.ops)
    assert any(isinstance(op, AddEdge) and op.kind == EdgeKind.GROUNDS for op in plan.ops)
    PlanExecutor(embedder, config).validate(
        memory, plan, FoldScope("alice", event.id, node_id, now)
    )


async def test_same_stream_twice_gives_identical_graphs(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    def stream() -> list[RawEvent]:
        return [
            make_event(*LEAK_1, id="a", hours=1), make_event(*LEAK_2, id="b", hours=2),
            make_event(*PASTA, id="c", hours=3),
            make_event("FLX-142 late", "Havelstrom FLX-142 late by Friday", id="d", hours=4),
            make_event("FLX-142 fixed", "FLX-142 fixed because Ruben patched it", id="e", hours=5),
            make_event(*LEAK_3, id="f", hours=6),
        ]  # fmt: skip

    graphs = []
    for _ in range(2):
        memory = engine.new_memory("alice")
        await fold_all(engine, memory, stream())
        nodes = sorted(n.model_dump_json() for n in memory.graph.nodes())
        edges = sorted(e.model_dump_json() for e in memory.graph.edges())
        graphs.append((nodes, edges))
    assert graphs[0] == graphs[1]
    assert len(graphs[0][1]) > 5


async def test_entity_index_is_rebuilt_after_a_load(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, [make_event("FLX-142 late", "feed late"),
                                    make_event("FLX-142 fixed", "patched")])  # fmt: skip
    loaded = engine.new_memory("alice")
    loaded.load(list(memory.graph.nodes()), list(memory.graph.edges()), {}, [], {}, {})
    assert len(loaded.entities) == 2
    assert [nid for _, nid in loaded.entities.postings("ticket:flx-142")] == [
        nid for _, nid in memory.entities.postings("ticket:flx-142")
    ]
    loaded.entities.clear()
    assert len(rebuild_entity_index(loaded)) == 2


FLIGHTS = "Flights to Bangkok on 18 Dec went up again, shall we book the Bangkok flights today?"
BOOKING = "Book the Bangkok flights today, the return flights on 3 Jan work with school."


async def test_a_concept_of_one_chat_reads_what_was_said(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    said = [FLIGHTS, BOOKING]
    await fold_all(
        engine,
        memory,
        [
            make_event("Jonas Weber", body, source="chat", participants=["Jonas Weber"])
            for body in said
        ],
    )
    (concept,) = concepts(memory)
    assert concept.text.startswith("Recurring: Jonas Weber: Book the Bangkok flights today")
    assert "Jonas Weber: Flights to Bangkok on 18 Dec went up again" in concept.text
    assert "Jonas Weber;" not in concept.text


async def test_a_title_several_members_share_is_written_once(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    subject = "Kiezbrief: Christmas market on Boxhagener Platz"
    body = "The Christmas market on Boxhagener Platz opens on 27 November, with a flea market."
    await fold_all(engine, memory, [make_event(subject, body, source="email") for _ in range(2)])
    (concept,) = concepts(memory)
    assert concept.text == f"Recurring: {subject} (×2)"
