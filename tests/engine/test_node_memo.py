"""NodeMemo: a value derived from a node is kept while that node is the graph's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from schemas.graph import Node, NodeKind
from topologies import entities
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


def test_a_value_of_a_group_of_nodes_is_derived_again_only_when_one_of_them_changes() -> None:
    """What a concept's members name is read fold after fold: it is derived once for the
    same members, again for a new version of one of them or another member."""
    memory = TenantMemory("t", dim=8)
    derived: list[list[str]] = []

    def titles_of(nodes: Sequence[Node]) -> list[str]:
        derived.append([n.title for n in nodes])
        return [n.title for n in nodes]

    with memory.transaction():
        memory.graph.add_node(concept("c-1", "Passport"))
        memory.graph.add_node(concept("c-2", "Photos"))
    memo, graph = memory.node_memo, memory.graph
    assert memo.group("titles", "g", graph.nodes_of(["c-1", "c-2"]), titles_of) == [
        "Passport",
        "Photos",
    ]
    memo.group("titles", "g", graph.nodes_of(["c-1", "c-2"]), titles_of)
    with memory.transaction():
        memory.graph.update_node("c-2", title="Passport photos")
    memo.group("titles", "g", graph.nodes_of(["c-1", "c-2"]), titles_of)
    memo.group("titles", "g", graph.nodes_of(["c-1"]), titles_of)
    assert derived == [["Passport", "Photos"], ["Passport", "Passport photos"], ["Passport"]]


def test_a_group_with_a_removed_node_leaves_nothing_derived_behind() -> None:
    memory = TenantMemory("t", dim=8)
    with memory.transaction():
        memory.graph.add_node(concept("c-1", "Passport"))
    nodes = memory.graph.nodes_of(["c-1"])
    memory.node_memo.group("titles", "g", nodes, lambda group: [n.title for n in group])
    with memory.transaction():
        memory.graph.remove_node("c-1")
    assert memory.node_memo.group("titles", "g", nodes, lambda group: ["derived again"]) == [
        "derived again"
    ]


def test_an_event_s_entities_are_read_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexed at ingest, looked up again when planned and at later folds of its theme: the
    names, tickets and threads of an event are read from its text once."""
    memory = TenantMemory("t", dim=8)
    read: list[str] = []
    extract = entities.extract_entities

    def counted(text: str, *args: object, **kwargs: object) -> list[str]:
        read.append(text)
        return extract(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(entities, "extract_entities", counted)
    event = Node(id="e-1", tenant="t", kind=NodeKind.EVENT, title="Ticket OPS-12 with Alice Moreau",
                 ts=NOW, created_at=NOW, updated_at=NOW)  # fmt: skip
    with memory.transaction():
        memory.graph.add_node(event)
    memory.entities.add_node(event)  # at ingest
    memory.entities.add_node(event)  # the planner makes sure the event is indexed
    found = entities.entities_of(memory, event)  # the planner's entity links
    assert "ticket:ops-12" in found
    assert entities.entities_of(memory, event) == found  # a later fold's intent bounds
    assert read == ["Ticket OPS-12 with Alice Moreau"]
