"""Proactive context assembly: bounded candidates, tier budgets, signals, access counting."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from schemas.events import RawEvent
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import IntentStatus
from topologies.config import DECAY_PER_DAY, ContextConfig, EngineConfig
from topologies.context import assemble_context, record_access
from topologies.edge_cache import DEADLINE_EDGE_CAP, EdgeCache
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id

MakeEvent = Callable[..., RawEvent]
TOPICS = [
    "bathroom ceiling leak water landlord",
    "dentist molar crown appointment",
    "passport renewal flight bangkok",
    "launch review deck go no-go",
    "marathon training long run pace",
]


@pytest.fixture
def config() -> EngineConfig:
    return EngineConfig(assign_similarity=0.35, pair_similarity=0.3)


@pytest.fixture
def engine(embedder: HashingEmbedder, config: EngineConfig) -> FoldEngine:
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def filled(engine: FoldEngine, make_event: MakeEvent, rounds: int = 3) -> TenantMemory:
    memory = engine.new_memory("alice")
    for i in range(rounds):
        for topic in TOPICS:
            await engine.fold(memory, make_event(f"{topic} {i}", f"note {i} about {topic}"))
    return memory


def context_for(engine: FoldEngine, memory: TenantMemory, event: RawEvent, cfg: ContextConfig):
    engine.ingest(memory, event)
    node_id = event_node_id(memory.tenant, event.id)
    vector = memory.index(NodeKind.EVENT).get(node_id)
    assert vector is not None
    return node_id, assemble_context(memory, vector, node_id, event.ts, cfg)


async def test_tiers_respect_their_budgets_and_do_not_overlap(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = await filled(engine, make_event)
    cfg = ContextConfig(immediate=3, working=4, background=2)
    node_id, context = context_for(engine, memory, make_event("dentist molar pain again"), cfg)
    assert len(context.immediate) <= 3 and len(context.working) <= 4
    assert len(context.background) <= 2
    ids = [item.node_id for item in context.items]
    assert len(ids) == len(set(ids)) and node_id not in ids
    for item in context.items:
        assert set(item.signals) >= {"pagerank", "recency", "access", "urgency", "type"}
        assert all(0.0 <= v <= 1.0 for v in item.signals.values())


async def test_knn_hits_rank_high(engine: FoldEngine, make_event: MakeEvent) -> None:
    memory = await filled(engine, make_event)
    event = make_event("dentist molar crown appointment", "crown fitting for the molar")
    _, context = context_for(engine, memory, event, ContextConfig())
    assert context.knn and max(context.knn.values()) > 0.3
    best = max(context.knn, key=lambda nid: context.knn[nid])
    top_ids = {item.node_id for item in [*context.immediate, *context.working[:3]]}
    assert best in top_ids
    top_titles = " ".join(i.title.lower() for i in [*context.immediate, *context.working[:5]])
    assert "dentist" in top_titles or "molar" in top_titles


async def test_candidate_count_is_bounded(engine: FoldEngine, make_event: MakeEvent) -> None:
    memory = await filled(engine, make_event, rounds=4)
    cfg = ContextConfig(knn=2, max_candidates=6, max_fanout=2)
    _, context = context_for(engine, memory, make_event("passport flight"), cfg)
    # at most 4 kinds x knn hits, expansion capped at max_candidates, plus open intents
    open_intents = sum(
        1 for n in memory.graph.nodes(NodeKind.INTENT) if n.status != IntentStatus.RESOLVED
    )
    assert len(context.items) <= max(cfg.max_candidates, 4 * cfg.knn) + open_intents


async def test_selected_nodes_gain_access(engine: FoldEngine, make_event: MakeEvent) -> None:
    memory = await filled(engine, make_event, rounds=2)
    event = make_event("passport renewal flight bangkok again")
    _, context = context_for(engine, memory, event, ContextConfig())
    before = {i.node_id: memory.graph.node(i.node_id).access_count for i in context.items}
    memory.begin()
    record_access(memory, context, event.ts)
    changes = memory.commit()
    for node_id, count in before.items():
        node = memory.graph.node(node_id)
        assert node.access_count == count + 1 and node.last_access == event.ts
        assert node_id in changes.nodes


async def test_access_counts_grow_across_folds(engine: FoldEngine, make_event: MakeEvent) -> None:
    memory = engine.new_memory("alice")
    for i in range(4):
        await engine.fold(memory, make_event(f"dentist molar crown {i}", "dentist appointment"))
    first = memory.graph.node(event_node_id("alice", "ev-0001"))
    assert first.access_count >= 2


async def test_open_intents_are_always_candidates(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = await filled(engine, make_event, rounds=2)
    now = make_event("x").ts
    intent = Node(id="i_manual", kind=NodeKind.INTENT, tenant="alice", title="Book the dentist",
                  created_at=now, updated_at=now, status=IntentStatus.PENDING,
                  deadline=now + timedelta(days=2))  # fmt: skip
    closed = intent.model_copy(update={"id": "i_closed", "status": IntentStatus.RESOLVED})
    memory.graph.add_node(intent)
    memory.graph.add_node(closed)
    _, context = context_for(engine, memory, make_event("marathon long run pace"), ContextConfig())
    items = {item.node_id: item for item in context.items}
    assert "i_manual" in items and "i_closed" not in items
    assert items["i_manual"].signals["urgency"] > 0.5


async def test_an_empty_memory_gives_an_empty_context(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = engine.new_memory("alice")
    _, context = context_for(engine, memory, make_event("first ever event"), ContextConfig())
    assert context.items == [] and context.knn == {}


async def test_kept_edge_scans_are_read_again_only_where_edges_changed(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = await filled(engine, make_event, rounds=2)
    graph, cache = memory.graph, memory.edge_cache
    changed, kept = sorted(graph.ids(NodeKind.CONCEPT))[:2]
    newcomer = sorted(graph.ids(NodeKind.EVENT))[0]
    before = cache.many(graph, [changed, kept], DECAY_PER_DAY)
    assert cache.many(graph, [changed, kept], DECAY_PER_DAY) == before
    when = make_event("later").ts
    memory.begin()
    graph.put_edge(
        Edge(src=changed, dst=newcomer, kind=EdgeKind.RELATED_TO, w0=5.0, t_last=when,
             created_at=when)
    )  # fmt: skip
    memory.commit()
    after = cache.many(graph, [changed, kept], DECAY_PER_DAY)
    assert after[1] is before[1]
    assert after[0] is not before[0]
    assert after[0].ranked[0][0] == newcomer  # the strongest edge now
    assert cache.key(newcomer) in after[0].out[0]  # and a PageRank row


async def test_a_node_scanned_again_ranks_its_edges_as_a_fresh_scan_does(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    """A scan reads what it derived from each edge version before (its strength, its time):
    an edge replaced by a new version (reinforced, weakened) is read anew, the others as
    they were, and the ranking is the one a cache that never saw the node makes."""
    memory = await filled(engine, make_event, rounds=2)
    graph, cache = memory.graph, memory.edge_cache
    hub = max(sorted(graph.ids(NodeKind.CONCEPT)), key=graph.degree)
    cache.many(graph, [hub], DECAY_PER_DAY)
    weakest = cache.many(graph, [hub], DECAY_PER_DAY)[0].ranked[-1][1]
    strongest = cache.many(graph, [hub], DECAY_PER_DAY)[0].ranked[0][1]
    memory.begin()
    graph.put_edge(weakest.model_copy(update={"w0": strongest.w0 * 4}))
    graph.put_edge(strongest.model_copy(update={"w0": strongest.w0 / 100}))
    memory.commit()

    again = cache.many(graph, [hub], DECAY_PER_DAY)[0]
    fresh = EdgeCache().many(graph, [hub], DECAY_PER_DAY)[0]

    assert again.ranked == fresh.ranked
    assert again.ranked[0][1].key == weakest.key  # the reinforced one leads now
    assert again.out[1:].tolist() == fresh.out[1:].tolist()  # w0 and t_last of each row


async def test_a_nodes_deadline_sources_are_its_oldest_and_follow_its_edges(
    engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = await filled(engine, make_event, rounds=2)
    graph, cache = memory.graph, memory.edge_cache
    target = sorted(graph.ids(NodeKind.EVENT))[0]
    start = make_event("x").ts
    days = []
    memory.begin()
    for i in range(DEADLINE_EDGE_CAP + 2):
        when = start + timedelta(minutes=i)
        day = Node(id=f"t_day{i}", kind=NodeKind.TIME, tenant="alice", title=f"Day {i}",
                   created_at=when, updated_at=when, deadline=when + timedelta(days=i))  # fmt: skip
        graph.add_node(day)
        days.append(day.id)
        before = cache.many(graph, [target], DECAY_PER_DAY)[0].deadline_sources
        graph.put_edge(Edge(src=day.id, dst=target, kind=EdgeKind.DEADLINE_FOR, w0=1.0,
                            t_last=when, created_at=when))  # fmt: skip
        assert before == days[: min(i, DEADLINE_EDGE_CAP)]
    memory.commit()

    assert (
        cache.many(graph, [target], DECAY_PER_DAY)[0].deadline_sources == days[:DEADLINE_EDGE_CAP]
    )
    memory.begin()
    graph.remove_edge(days[0], target, EdgeKind.DEADLINE_FOR)
    memory.commit()
    assert (
        cache.many(graph, [target], DECAY_PER_DAY)[0].deadline_sources
        == days[1 : DEADLINE_EDGE_CAP + 1]
    )


async def test_a_deadline_shared_by_many_candidates_is_read_once_and_makes_each_urgent(
    engine: FoldEngine, make_event: MakeEvent, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = await filled(engine, make_event, rounds=2)
    now = make_event("x").ts
    day = Node(id="t_friday", kind=NodeKind.TIME, tenant="alice", title="Deadline Friday",
               created_at=now, updated_at=now, deadline=now + timedelta(days=2))  # fmt: skip
    memory.graph.add_node(day)
    anchored = sorted(memory.graph.ids(NodeKind.EVENT))
    for event_id in anchored:
        memory.graph.put_edge(Edge(src=day.id, dst=event_id, kind=EdgeKind.DEADLINE_FOR, w0=1.0,
                                   t_last=now, created_at=now))  # fmt: skip
    reads: list[str] = []
    read = memory.graph.get

    def counting_get(node_id: str) -> Node | None:
        reads.append(node_id)
        return read(node_id)

    monkeypatch.setattr(memory.graph, "get", counting_get)
    _, context = context_for(engine, memory, make_event("dentist molar crown"), ContextConfig())
    urgent = [i for i in context.items if i.node_id in anchored]
    assert len(urgent) >= 3
    assert all(item.signals["urgency"] == 1.0 for item in urgent)  # the nearest deadline
    assert reads.count(day.id) <= 2  # as a candidate, and once as the anchor of them all


def test_recency_on_integer_microseconds_is_the_datetime_formula_to_the_bit(
    engine: FoldEngine,
) -> None:
    from topologies.context import _recencies

    memory = engine.new_memory("alice")
    now = datetime.fromisoformat("2026-11-20T18:45:00.123457+01:00")
    stamps = ["2026-11-20T08:05:00+01:00", "2026-11-02T07:48:00.000001+00:00",
              "2025-02-28T23:59:59.999999-05:00", "2026-11-20T18:45:00.123457+01:00",
              "2026-11-20T17:45:00.123458+00:00"]  # fmt: skip
    nodes = [Node(id=f"n{i}", kind=NodeKind.EVENT, tenant="alice", title="x",
                  ts=datetime.fromisoformat(s), created_at=now, updated_at=now)
             for i, s in enumerate(stamps)]  # fmt: skip
    tau = 7.0
    expected = []
    for node in nodes:
        assert node.ts is not None
        if node.ts <= now:
            expected.append(math.exp(-((now - node.ts).total_seconds() / 86400.0) / tau))
        else:
            expected.append(1.0)  # all touches in the future
    assert _recencies(memory, nodes, now, tau).tolist() == expected


def test_recency_of_a_whole_candidate_set_is_the_datetime_formula_to_the_bit(
    engine: FoldEngine,
) -> None:
    """Recency is computed for all candidates at once: each node's value is still the kernel
    on its latest touch up to now, as ``timedelta`` arithmetic gives it, to the bit; a node
    accessed after now (an event folded late) is read at its own time, one touched only
    after now is fully recent and one never touched not at all."""
    import random

    from topologies.context import _recencies

    memory = engine.new_memory("alice")
    now = datetime.fromisoformat("2026-11-20T18:45:00.123457+01:00")
    rng = random.Random(7)
    nodes: list[Node] = []
    for i in range(300):
        ts = now - timedelta(microseconds=rng.randrange(-86_400 * 10**6, 400 * 86_400 * 10**6))
        access = now + timedelta(hours=rng.choice([-30, 2])) if i % 3 == 0 else None
        nodes.append(Node(id=f"n{i}", kind=NodeKind.EVENT, tenant="alice", title="x", ts=ts,
                          last_access=access, created_at=now, updated_at=now))  # fmt: skip
    nodes.append(Node(id="untimed", kind=NodeKind.EVENT, tenant="alice", title="x",
                      created_at=now, updated_at=now))  # fmt: skip
    tau = 7.0
    expected = []
    for node in nodes:
        touches = sorted((s for s in (node.ts, node.last_access) if s is not None), reverse=True)
        past = [s for s in touches if s <= now]
        if past:
            expected.append(math.exp(-((now - past[0]).total_seconds() / 86400.0) / tau))
        else:
            expected.append(1.0 if touches else 0.0)
    assert 0.0 in expected and 1.0 in expected
    assert _recencies(memory, nodes, now, tau).tolist() == expected


def test_recency_of_a_nodes_new_version_is_read_at_its_new_access(engine: FoldEngine) -> None:
    """A new version of a node (its access counted) holds the stamps of the one before, kept
    from the first read; its recency is still the formula on its own latest touch."""
    from topologies.context import _recencies

    memory = engine.new_memory("alice")
    now = datetime.fromisoformat("2026-11-20T18:45:00.123457+01:00")
    made = now - timedelta(days=9, microseconds=3)
    node = Node(id="c1", kind=NodeKind.CONCEPT, tenant="alice", title="x", ts=made,
                created_at=made, updated_at=made)  # fmt: skip
    accessed = node.model_copy(update={"last_access": now - timedelta(hours=5), "access_count": 1})
    tau = 7.0

    first = _recencies(memory, [node], now, tau).tolist()
    again = _recencies(memory, [accessed], now, tau).tolist()

    assert first == [math.exp(-((now - made).total_seconds() / 86400.0) / tau)]
    assert again == [math.exp(-(timedelta(hours=5).total_seconds() / 86400.0) / tau)]
    assert memory.node_memo.stamps  # the stamps read are kept for the next version
    memory.node_memo.forget(["c1"])
    assert not memory.node_memo.stamps  # and nothing read from a removed node stays behind
