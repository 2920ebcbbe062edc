"""A concept's member events are read from its edges once, and again when they change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies import topics
from topologies.boundaries import code_share
from topologies.graph import MemoryGraph
from topologies.memory import TenantMemory

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def event(node_id: str, hours: int, text: str = "") -> Node:
    when = NOW + timedelta(hours=hours)
    return Node(id=node_id, tenant="t", kind=NodeKind.EVENT, title=text or node_id, text=text,
                ts=when, created_at=when, updated_at=when)  # fmt: skip


def concept(node_id: str) -> Node:
    return Node(id=node_id, tenant="t", kind=NodeKind.CONCEPT, title=node_id, created_at=NOW,
                updated_at=NOW)  # fmt: skip


def grounds(event_id: str, concept_id: str) -> Edge:
    return Edge(src=event_id, dst=concept_id, kind=EdgeKind.GROUNDS, w0=1.0, t_last=NOW,
                created_at=NOW)  # fmt: skip


def memory_with(concepts: dict[str, list[Node]]) -> TenantMemory:
    memory = TenantMemory("t", dim=8)
    with memory.transaction():
        for concept_id, members in concepts.items():
            memory.graph.add_node(concept(concept_id))
            for node in members:
                memory.graph.add_node(node)
                memory.graph.put_edge(grounds(node.id, concept_id))
    return memory


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The concepts whose member edges were read from the graph."""
    seen: list[str] = []
    read = MemoryGraph.recent_sources

    def counted(graph: MemoryGraph, node_id: str, kind: EdgeKind, limit: int) -> list[str]:
        seen.append(node_id)
        return read(graph, node_id, kind, limit)

    monkeypatch.setattr(MemoryGraph, "recent_sources", counted)
    return seen


def test_the_members_of_an_unchanged_concept_are_read_from_its_edges_once(
    reads: list[str],
) -> None:
    memory = memory_with({"c-1": [event("e-1", 1), event("e-2", 2)], "c-2": [event("e-3", 3)]})
    assert topics.member_events(memory, "c-1") == ["e-2", "e-1"]
    with memory.transaction():  # another concept gains a member: c-1's stay as they were
        memory.graph.add_node(event("e-4", 4))
        memory.graph.put_edge(grounds("e-4", "c-2"))
    assert topics.member_events(memory, "c-1") == ["e-2", "e-1"]
    assert reads.count("c-1") == len(topics.MEMBER_EDGES)


def test_the_members_follow_a_new_member_a_removed_one_and_a_moved_event_time() -> None:
    memory = memory_with({"c-1": [event("e-1", 1), event("e-2", 2)]})
    assert topics.member_events(memory, "c-1") == ["e-2", "e-1"]
    with memory.transaction():
        memory.graph.add_node(event("e-3", 3))
        memory.graph.put_edge(grounds("e-3", "c-1"))
    assert topics.member_events(memory, "c-1") == ["e-3", "e-2", "e-1"]
    with memory.transaction():
        memory.graph.update_node("e-1", ts=NOW + timedelta(hours=5))
    assert topics.member_events(memory, "c-1") == ["e-1", "e-3", "e-2"]
    with memory.transaction():
        memory.graph.remove_node("e-3")
    assert topics.member_events(memory, "c-1") == ["e-1", "e-2"]


def test_a_rolled_back_member_leaves_the_concept() -> None:
    memory = memory_with({"c-1": [event("e-1", 1)]})
    with pytest.raises(RuntimeError), memory.transaction():
        memory.graph.add_node(event("e-2", 2))
        memory.graph.put_edge(grounds("e-2", "c-1"))
        assert topics.member_events(memory, "c-1") == ["e-2", "e-1"]
        raise RuntimeError("the fold fails")
    assert topics.member_events(memory, "c-1") == ["e-1"]


def test_code_share_reads_a_members_new_version() -> None:
    """A member's text changes (a redaction): the tickets it named no longer tie."""
    chat = [event(f"chat-{i}", i, "FLX-140 and FLX-141: pricing table is ready") for i in range(3)]
    mails = [event(f"mail-{i}", 10 + i, f"Re: FLX-14{i} pricing") for i in range(2)]
    memory = memory_with({"chat": chat, "mails": mails})
    assert code_share(memory, "chat", "mails") == 1.0
    with memory.transaction():
        memory.graph.update_node("mail-0", title="Re: pricing", text="[redacted]")
    assert code_share(memory, "chat", "mails") == 0.5
