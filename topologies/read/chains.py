"""Supersedes chains: the whole revision arc of a FACT / CONCEPT, oldest first.

A newer item points at the older one through ``node.supersedes`` and an edge
``newer -SUPERSEDES-> older``; the older one back through ``node.superseded_by``. Both are
followed (either may be missing), each step is O(degree), so a walk costs O(chain length).
A query that matches the EVENT a revision was read from gets that revision's chain too
(:func:`chain_for_hit`): people ask in the words of what they said, which is the event.
"""

from __future__ import annotations

from datetime import datetime

from schemas.graph import EdgeKind, Node, NodeKind
from topologies.facts.chains import walk
from topologies.graph import MemoryGraph

CHAIN_KINDS = frozenset({NodeKind.FACT, NodeKind.CONCEPT})
MAX_CHAIN = 256


def _older(graph: MemoryGraph, node: Node) -> str | None:
    if node.supersedes and graph.resolve(node.supersedes) in graph:
        return graph.resolve(node.supersedes)
    for edge in graph.out_edges(node.id, EdgeKind.SUPERSEDES):
        return edge.dst
    return None


def _newer(graph: MemoryGraph, node: Node) -> str | None:
    if node.superseded_by and graph.resolve(node.superseded_by) in graph:
        return graph.resolve(node.superseded_by)
    for edge in graph.in_edges(node.id, EdgeKind.SUPERSEDES):
        return edge.src
    return None


def has_chain(graph: MemoryGraph, node: Node) -> bool:
    return node.kind in CHAIN_KINDS and (
        _older(graph, node) is not None or _newer(graph, node) is not None
    )


def chain_of(graph: MemoryGraph, node_id: str) -> list[Node]:
    """The chain through ``node_id``, oldest first (just the node when it has no chain)."""
    start = graph.get(node_id)
    if start is None:
        return []
    if start.kind not in CHAIN_KINDS:
        return [start]
    oldest = walk(graph, start, lambda n: _older(graph, n), MAX_CHAIN)[-1]
    return walk(graph, oldest, lambda n: _newer(graph, n), MAX_CHAIN)


def revision_of_event(graph: MemoryGraph, node: Node) -> Node | None:
    """The first FACT read from an EVENT (``FACT -DERIVED_FROM-> EVENT``) that belongs to a
    supersedes chain, else None."""
    if node.kind != NodeKind.EVENT:
        return None
    facts = []
    for edge in graph.in_edges(node.id, EdgeKind.DERIVED_FROM):
        fact = graph.get(edge.src)
        if fact is not None and fact.kind == NodeKind.FACT and has_chain(graph, fact):
            facts.append(fact)
    return min(facts, key=lambda f: f.id) if facts else None


def chain_for_hit(graph: MemoryGraph, node: Node) -> list[Node]:
    """The chain a hit stands for: its own (FACT / CONCEPT), or that of a revision read from
    it (EVENT); empty when it has none."""
    if has_chain(graph, node):
        return chain_of(graph, node.id)
    fact = revision_of_event(graph, node)
    return chain_of(graph, fact.id) if fact is not None else []


def valid_at(node: Node, instant: datetime) -> bool:
    """Belief validity: valid_from <= instant < valid_to (open ends allowed)."""
    if node.valid_from is not None and node.valid_from > instant:
        return False
    return not (node.valid_to is not None and node.valid_to <= instant)


def overlaps(node: Node, start: datetime, end: datetime) -> bool:
    lo = node.valid_from or node.ts
    hi = node.valid_to
    if lo is not None and lo > end:
        return False
    return not (hi is not None and hi < start)
