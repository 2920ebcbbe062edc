"""NodeMemo: a value derived from a node is kept while that node is the graph's."""

from __future__ import annotations

from datetime import UTC, datetime

from schemas.graph import Node, NodeKind
from topologies.memory import TenantMemory

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def concept(node_id: str, title: str) -> Node:
    return Node(id=node_id, tenant="t", kind=NodeKind.CONCEPT, title=title, created_at=NOW,
                updated_at=NOW)  # fmt: skip


def test_a_value_is_derived_once_per_version_of_a_node() -> None:
    memory = TenantMemory("t", dim=8)
    derived: list[str] = []

    def title_of(node: Node) -> str:
        derived.append(node.title)
        return node.title

    with memory.transaction():
        memory.graph.add_node(concept("c-1", "Passport"))
    memo = memory.node_memo
    assert memo.get("title", memory.graph.node("c-1"), title_of) == "Passport"
    assert memo.get("title", memory.graph.node("c-1"), title_of) == "Passport"
    with memory.transaction():
        memory.graph.update_node("c-1", title="Passport renewal")
    assert memo.get("title", memory.graph.node("c-1"), title_of) == "Passport renewal"
    assert derived == ["Passport", "Passport renewal"]


def test_a_removed_node_leaves_nothing_derived_behind() -> None:
    memory = TenantMemory("t", dim=8)
    with memory.transaction():
        memory.graph.add_node(concept("c-1", "Passport"))
    node = memory.graph.node("c-1")
    memory.node_memo.get("title", node, lambda n: n.title)
    with memory.transaction():
        memory.graph.remove_node("c-1")
    assert memory.node_memo.get("title", node, lambda n: "derived again") == "derived again"
