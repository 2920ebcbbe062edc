"""Supersedes chains: doubly linked revisions over FACT (or CONCEPT) nodes.

``new.supersedes = old.id``, ``old.superseded_by = new.id``, an edge ``new -SUPERSEDES-> old``
and ``old.valid_to = new.valid_from``. The predecessor is never deleted by a revision. Every
walk follows the pointers, so it costs O(chain length) whatever the size of the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from schemas.graph import Edge, EdgeKind, Node
from topologies.graph import MemoryGraph
from topologies.memory import TenantMemory

MAX_CHAIN = 10_000  # guards a corrupted (cyclic) chain


def walk(
    graph: MemoryGraph, start: Node, step: Callable[[Node], str | None], limit: int
) -> list[Node]:
    """``start`` and the nodes reached by repeating ``step`` (an id or None), at most ``limit``
    nodes; stops at a missing node or a node already walked (a corrupted, cyclic chain)."""
    path = [start]
    seen = {start.id}
    node = start
    while len(path) < limit:
        nxt_id = step(node)
        if nxt_id is None or nxt_id in seen:
            break
        nxt = graph.get(nxt_id)
        if nxt is None:
            break
        seen.add(nxt_id)
        path.append(nxt)
        node = nxt
    return path


def _newer(node: Node) -> str | None:
    return node.superseded_by or None


def _older(node: Node) -> str | None:
    return node.supersedes or None


def head_of(memory: TenantMemory, node_id: str) -> Node:
    """The newest revision of the chain holding ``node_id``."""
    return walk(memory.graph, memory.graph.node(node_id), _newer, MAX_CHAIN + 1)[-1]


def tail_of(memory: TenantMemory, node_id: str) -> Node:
    """The oldest revision of the chain holding ``node_id``."""
    return walk(memory.graph, memory.graph.node(node_id), _older, MAX_CHAIN + 1)[-1]


def chain_of(memory: TenantMemory, node_id: str) -> list[Node]:
    """The whole revision arc through ``node_id``, oldest first: O(chain length)."""
    return walk(memory.graph, tail_of(memory, node_id), _newer, MAX_CHAIN + 1)


def link(memory: TenantMemory, new_id: str, old_id: str, when: datetime) -> None:
    """Write both pointers and the SUPERSEDES edge; close the old item's validity."""
    graph = memory.graph
    new, old = graph.node(new_id), graph.node(old_id)
    valid_from = new.valid_from or when
    graph.replace_node(new.model_copy(update={"supersedes": old.id, "valid_from": valid_from}))
    graph.replace_node(
        old.model_copy(update={"superseded_by": new.id, "valid_to": valid_from, "updated_at": when})
    )
    graph.put_edge(
        Edge(src=new.id, dst=old.id, kind=EdgeKind.SUPERSEDES, w0=1.0, t_last=when, created_at=when)
    )


def unlink_for_removal(memory: TenantMemory, node_ids: set[str], when: datetime) -> int:
    """Before ``node_ids`` are deleted, relink the nearest surviving neighbours around them.

    For each maximal run of removed revisions, the surviving newer item now supersedes the
    surviving older one (both pointers, edge, validity). A removed head reopens its surviving
    predecessor (valid_to cleared); a removed tail leaves its successor as the new tail.
    Returns the number of relinks written.
    """
    graph = memory.graph
    relinked = 0
    done: set[str] = set()
    for node_id in sorted(node_ids):
        node = graph.get(node_id)
        if node is None or node_id in done or not (node.supersedes or node.superseded_by):
            continue
        older = node
        while older.supersedes and older.supersedes in node_ids:
            done.add(older.id)
            nxt = graph.get(older.supersedes)
            if nxt is None:
                break
            older = nxt
        newer = node
        while newer.superseded_by and newer.superseded_by in node_ids:
            done.add(newer.id)
            nxt = graph.get(newer.superseded_by)
            if nxt is None:
                break
            newer = nxt
        done.update({older.id, newer.id})
        prev = graph.get(older.supersedes) if older.supersedes else None
        succ = graph.get(newer.superseded_by) if newer.superseded_by else None
        if prev is not None and succ is not None:
            graph.replace_node(succ.model_copy(update={"supersedes": None}))
            graph.replace_node(prev.model_copy(update={"superseded_by": None}))
            link(memory, succ.id, prev.id, when)
            relinked += 1
        elif prev is not None:
            graph.replace_node(
                prev.model_copy(
                    update={"superseded_by": None, "valid_to": None, "updated_at": when}
                )
            )
            relinked += 1
        elif succ is not None:
            graph.replace_node(succ.model_copy(update={"supersedes": None, "updated_at": when}))
            relinked += 1
    return relinked
