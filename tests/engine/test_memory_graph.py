"""Graph, vector index and TenantMemory transactions: snapshot by journal, exact rollback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from schemas.errors import NotFoundError
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies.graph import decayed_weight
from topologies.memory import POOL, TenantMemory, event_node_id, stable_id
from topologies.vector_index import VectorIndex

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def node(node_id: str, kind: NodeKind = NodeKind.CONCEPT, title: str = "t") -> Node:
    return Node(id=node_id, kind=kind, tenant="alice", title=title, created_at=NOW, updated_at=NOW)


def edge(src: str, dst: str, kind: EdgeKind = EdgeKind.RELATED_TO, w0: float = 0.4) -> Edge:
    return Edge(src=src, dst=dst, kind=kind, w0=w0, t_last=NOW, created_at=NOW)


def dump(memory: TenantMemory) -> tuple[object, ...]:
    nodes = sorted((n.id, n.model_dump_json()) for n in memory.graph.nodes())
    edges = sorted((e.src, e.dst, e.kind.value, e.model_dump_json()) for e in memory.graph.edges())
    vectors = {
        name: sorted((i, index.get(i).tobytes()) for i in index.ids())  # type: ignore[union-attr]
        for name, index in memory.indexes.items()
    }
    return (
        nodes,
        edges,
        sorted(memory.graph.aliases.items()),
        vectors,
        sorted(memory.meta.items()),
        sorted(memory.event_states.items()),
    )


def test_stable_ids_depend_only_on_their_parts() -> None:
    assert stable_id("c", "alice", "ev-1", "n1") == stable_id("c", "alice", "ev-1", "n1")
    assert stable_id("c", "alice", "ev-1", "n1") != stable_id("c", "bob", "ev-1", "n1")
    assert event_node_id("alice", "x").startswith("ev_")


def test_edges_are_keyed_by_kind_so_two_kinds_can_join_the_same_pair() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("a"), node("b")], [], {})
    memory.graph.put_edge(edge("a", "b", EdgeKind.RELATED_TO))
    memory.graph.put_edge(edge("a", "b", EdgeKind.CAUSES, 0.7))
    assert memory.graph.edge_count() == 2
    assert {e.kind for e in memory.graph.out_edges("a")} == {EdgeKind.RELATED_TO, EdgeKind.CAUSES}


def test_an_edge_needs_both_endpoints() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("a")], [], {})
    with pytest.raises(NotFoundError):
        memory.graph.put_edge(edge("a", "missing"))


def test_rollback_restores_graph_indexes_meta_and_event_states_exactly() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("a"), node("b"), node("c")], [edge("a", "b")], {"old": "a"})
    memory.index(NodeKind.CONCEPT).upsert("a", [1, 0, 0, 0])
    memory.index(NodeKind.CONCEPT).upsert("b", [0, 1, 0, 0])
    memory.meta["clock"] = NOW.isoformat()
    memory.event_states["ev-1"] = "folded"
    before = dump(memory)

    memory.begin()
    memory.graph.add_node(node("d"))
    memory.graph.update_node("a", title="renamed", access_count=3)
    memory.graph.put_edge(edge("c", "d", EdgeKind.CAUSES, 0.7))
    memory.graph.put_edge(edge("a", "b", w0=1.5))
    memory.graph.remove_node("b")
    memory.graph.set_alias("b", "a")
    memory.index(NodeKind.CONCEPT).upsert("a", [0, 0, 1, 0])
    memory.index(NodeKind.CONCEPT).remove("b")
    memory.index(POOL).upsert("d", [0, 0, 0, 1])
    memory.set_meta("clock", "later")
    memory.set_meta("new", 1)
    memory.set_event_state("ev-2", "stored")
    memory.set_event_state("ev-1", None)
    assert dump(memory) != before
    memory.rollback()

    assert dump(memory) == before
    assert not memory.in_transaction


def test_commit_reports_exactly_what_changed() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("a"), node("b")], [edge("a", "b")], {})
    memory.begin()
    memory.graph.add_node(node("c"))
    memory.graph.remove_edge("a", "b", EdgeKind.RELATED_TO)
    memory.index(NodeKind.CONCEPT).upsert("c", [1, 0, 0, 0])
    memory.set_meta("k", 2)
    memory.set_event_state("ev-9", "folded")
    change = memory.commit()

    assert set(change.nodes) == {"c"}
    assert change.edges == {("a", "b", EdgeKind.RELATED_TO): None}
    assert set(change.vectors) == {("CONCEPT", "c")}
    assert change.meta == {"k": 2}
    assert change.events == {"ev-9": "folded"}


def test_transaction_yields_the_changeset_it_commits() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("a")], [], {})
    with memory.transaction() as changes:
        memory.graph.add_node(node("b"))
        memory.set_meta("k", 1)
        assert changes.empty  # filled at the commit, when the block ends
    assert set(changes.nodes) == {"b"}
    assert changes.meta == {"k": 1}
    assert not memory.in_transaction


def test_transaction_context_manager_rolls_back_on_error() -> None:
    memory = TenantMemory("alice", dim=4)
    with pytest.raises(RuntimeError), memory.transaction() as changes:
        memory.graph.add_node(node("x"))
        raise RuntimeError("boom")
    assert "x" not in memory.graph
    assert changes.empty
    assert not memory.in_transaction


def test_aliases_of_absorbed_nodes_keep_resolving() -> None:
    memory = TenantMemory("alice", dim=4)
    memory.graph.load([node("keeper")], [], {"gone": "mid", "mid": "keeper"})
    assert memory.graph.resolve("gone") == "keeper"
    assert memory.graph.node("gone").id == "keeper"


def test_edge_weight_decays_lazily_from_w0_and_t_last() -> None:
    e = edge("a", "b", w0=1.0)
    assert decayed_weight(e, NOW, 0.1) == pytest.approx(1.0)
    assert decayed_weight(e, NOW + timedelta(days=10), 0.1) == pytest.approx(np.exp(-1.0))
    assert decayed_weight(e, NOW - timedelta(days=1), 0.1) == pytest.approx(1.0)


def test_vector_index_search_update_remove_and_merge() -> None:
    index = VectorIndex(3)
    index.upsert("a", [1, 0, 0])
    index.upsert("b", [0, 1, 0])
    index.upsert("c", [0, 0, 1])
    assert index.search([1, 0.2, 0], 1)[0][0] == "a"

    index.remove("a")  # the last vector moves into the freed slot
    assert len(index) == 2
    assert [name for name, _ in index.search([0, 0, 1], 2)] == ["c", "b"]

    index.upsert("b", [0, 0, 1])  # update in place
    assert index.similarity("b", "c") == pytest.approx(1.0)

    index.merge("b", "c")
    assert "c" not in index
    assert index.search([0, 0, 1], 5) == [("b", pytest.approx(1.0))]


def test_vector_index_search_can_exclude_ids() -> None:
    index = VectorIndex(2)
    index.upsert("self", [1, 0])
    index.upsert("other", [0.9, 0.1])
    assert [n for n, _ in index.search([1, 0], 1, exclude={"self"})] == ["other"]


def test_the_newest_edges_of_a_node_are_the_same_after_a_reload_in_any_order() -> None:
    """Bounded reads take a hub's newest edges: a store loading edges in its own order, a merge
    moving old edges or a rollback re-adding one must not change which those are."""
    from topologies.graph import MemoryGraph

    live = MemoryGraph("alice")
    live.begin()
    live.add_node(node("hub"))
    stamps = [NOW + timedelta(hours=h) for h in (3, 1, 2, 2, 5, 4)]  # out of order, one tie
    for i, stamp in enumerate(stamps):
        live.add_node(node(f"e{i}", NodeKind.EVENT))
        live.put_edge(
            Edge(
                src=f"e{i}",
                dst="hub",
                kind=EdgeKind.REINFORCES,
                w0=0.8,
                t_last=stamp,
                created_at=stamp,
            )
        )
    live.commit()
    expected = ["e4", "e5", "e0", "e3", "e2", "e1"]  # newest first, the tie by id (e3 > e2)
    assert live.recent_sources("hub", EdgeKind.REINFORCES, 6) == expected

    loaded = MemoryGraph("alice")
    loaded.load(list(live.nodes()), list(reversed(list(live.edges()))), {})
    assert loaded.recent_sources("hub", EdgeKind.REINFORCES, 6) == expected

    live.begin()
    removed = live.remove_edge("e0", "hub", EdgeKind.REINFORCES)
    assert removed is not None
    live.rollback()  # re-added at its place by creation time, not at the end
    assert live.recent_sources("hub", EdgeKind.REINFORCES, 3) == expected[:3]
