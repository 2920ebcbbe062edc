"""What intent emergence keeps between its readings (issue 15) is read anew when what it was
read from changes: an event's answer when the event changes, a goal's evidence when an edge
is written or rolled back, a concept's evidence rows when an edge is touched again, and the
order of a fold's events once the fold is over. The kept readings change the cost, never the
answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fold_helpers import ScriptedPlanner
from test_goal_steps import event, stored

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.graph import decayed_weight
from topologies.intents import EventOrder, FoldReads, IntentEmergence
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser
from topologies.scope import FoldScope

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=3, seconds=7, microseconds=123_457)
TOOTH = "Get the tooth fixed"


def node(node_id: str, kind: NodeKind, title: str) -> Node:
    return Node(id=node_id, tenant="alice", kind=kind, title=title, created_at=T0, updated_at=T0)


def edge(src: str, dst: str, kind: EdgeKind, at: datetime, w0: float = 1.0) -> Edge:
    return Edge(src=src, dst=dst, kind=kind, w0=w0, t_last=at, created_at=at)


def goal_memory(count: int) -> tuple[TenantMemory, list[str]]:
    """Events about a tooth, an intent and a concept, each event grounding both."""
    texts = ["Dentist: the tooth needs a crown", "Tooth still hurts", "Crown fitted on the tooth"]
    raws = [event(f"t-{n}", texts[n % 3], T0 + timedelta(hours=n)) for n in range(count)]
    memory = stored(raws)
    ids = [event_node_id("alice", raw.id) for raw in raws]
    with memory.transaction():
        memory.graph.add_node(node("i-tooth", NodeKind.INTENT, TOOTH))
        memory.graph.add_node(node("c-dentist", NodeKind.CONCEPT, "Dentist"))
    return memory, ids


def emergence() -> IntentEmergence:
    namer = Namer(None, PhraseParser())
    engine = FoldEngine(HashingEmbedder(dim=64), ScriptedPlanner({}), EngineConfig(), namer=namer)
    return engine.emergence


def test_an_event_that_changes_is_asked_again_whether_it_speaks_of_the_goal() -> None:
    memory, ids = goal_memory(1)
    names = Namer(None, PhraseParser())
    assert names.speaking_of(memory, ids, TOOTH) == {ids[0]}
    with memory.transaction():
        memory.graph.update_node(ids[0], title="Lunch with Mika at the canal")
    assert names.speaking_of(memory, ids, TOOTH) == set()


def test_values_of_several_nodes_are_derived_together_and_only_for_new_versions() -> None:
    memory, ids = goal_memory(3)
    asked: list[list[str]] = []

    def titles(nodes: list[Node]) -> list[str]:
        asked.append([n.id for n in nodes])
        return [n.title for n in nodes]

    memo, graph = memory.node_memo, memory.graph
    first = [graph.node(e) for e in ids[:2]]
    assert memo.many("title", first, titles) == [n.title for n in first]
    assert (
        memo.many("title", [graph.node(e) for e in ids], titles)[2] == "Crown fitted on the tooth"
    )
    with memory.transaction():
        graph.update_node(ids[0], title="Tooth fixed")
    assert memo.many("title", [graph.node(e) for e in ids], titles)[0] == "Tooth fixed"
    assert asked == [ids[:2], ids[2:], ids[:1]]


def test_a_goals_evidence_is_read_again_when_an_edge_is_written_or_rolled_back() -> None:
    memory, ids = goal_memory(3)
    graph, emerging = memory.graph, emergence()
    with memory.transaction():
        graph.put_edge(edge(ids[0], "i-tooth", EdgeKind.GROUNDS, T0))
    emerging._reads = FoldReads(EventOrder(graph, NOW))  # as while a fold runs
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0]}
    with memory.transaction():
        graph.put_edge(edge(ids[1], "i-tooth", EdgeKind.REINFORCES, T0))
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0], ids[1]}
    memory.begin()
    graph.put_edge(edge(ids[2], "i-tooth", EdgeKind.REINFORCES, T0))
    assert emerging._intent_evidence(memory, "i-tooth") == set(ids)
    memory.rollback()
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0], ids[1]}


def test_the_order_of_a_folds_events_is_not_kept_past_the_fold() -> None:
    """An event removed after a fold (forgotten) is not read from what the fold kept, even
    at the same stream time, nor after a fold that failed."""
    memory, ids = goal_memory(3)
    emerging = emergence()
    scope = FoldScope(tenant="alice", event_id="t-2", event_node_id=ids[2], now=NOW)
    emerging.emerge(memory, scope)
    with memory.transaction():
        memory.graph.remove_node(ids[2])
    intent = memory.graph.node("i-tooth")
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == set(ids[:2])

    def failing(memory: TenantMemory, scope: FoldScope) -> list[str]:
        raise RuntimeError("a plan failed")

    emerging._emerge = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        emerging.emerge(memory, scope)
    assert emerging._reads is None


def test_a_concepts_evidence_follows_an_edge_touched_again() -> None:
    memory, ids = goal_memory(2)
    graph, cache = memory.graph, memory.edge_cache
    with memory.transaction():
        for at, event_id in enumerate(ids):
            graph.put_edge(edge(event_id, "c-dentist", EdgeKind.GROUNDS, T0 + timedelta(at)))
    before = cache.evidence(graph, "c-dentist", EdgeKind.GROUNDS, 64)
    touched = graph.edge(ids[0], "c-dentist", EdgeKind.GROUNDS)
    assert touched is not None
    with memory.transaction():  # reinforced: a new weight and touch, the edge stays where it was
        graph.put_edge(touched.model_copy(update={"w0": 0.5, "t_last": NOW}))
    after = cache.evidence(graph, "c-dentist", EdgeKind.GROUNDS, 64)
    assert [row[2].w0 for row in after] == [1.0, 0.5]  # newest attached first
    assert after[0] is before[0]  # the untouched edge's row is kept
    assert after[1][3] > before[1][3]  # the touched one is read again


def test_a_concepts_evidence_is_the_sum_of_its_decayed_edge_weights_to_the_bit() -> None:
    memory, ids = goal_memory(3)
    graph = memory.graph
    with memory.transaction():
        for n, event_id in enumerate(ids):
            at = T0 + timedelta(hours=n, microseconds=333_333 * n + 1)
            graph.put_edge(edge(event_id, "c-dentist", EdgeKind.GROUNDS, at, w0=0.7 + n / 7))
    emerging = emergence()
    decay = emerging.config.consolidation.decay_per_day
    total, events = emerging._evidence(memory, "c-dentist", NOW, None)
    expected = 0.0
    for source in reversed(ids):  # the most recently attached first, as the scan reads them
        found = graph.edge(source, "c-dentist", EdgeKind.GROUNDS)
        assert found is not None
        expected += decayed_weight(found, NOW, decay)
    assert total == expected
    assert events == set(ids)
