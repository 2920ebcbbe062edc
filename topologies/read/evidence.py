"""Evidence links: which events ground a node (citations) and which concepts/intents a matched
node is evidence for (surfacing).

Evidence edges (docs/DESIGN.md section 2): EVENT/FACT -GROUNDS-> CONCEPT/FACT/INTENT,
EVENT/FACT -REINFORCES-> CONCEPT/INTENT, and FACT/CONCEPT/INTENT -DERIVED_FROM->
EVENT/CONCEPT/FACT.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping

from schemas.graph import EdgeKind, Node, NodeKind
from topologies.graph import MemoryGraph

SUPPORT_IN = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)  # evidence -> node
SUPPORT_OUT = (EdgeKind.DERIVED_FROM,)  # node -> evidence
SURFACED_KINDS = frozenset({NodeKind.CONCEPT, NodeKind.INTENT})


def supporters(graph: MemoryGraph, node_id: str) -> Iterator[tuple[str, float]]:
    """Direct evidence of a node with the edge's w0, strongest first."""
    found: list[tuple[str, float]] = []
    for kind in SUPPORT_IN:
        found.extend((e.src, e.w0) for e in graph.in_edges(node_id, kind))
    for kind in SUPPORT_OUT:
        found.extend((e.dst, e.w0) for e in graph.out_edges(node_id, kind))
    found.sort(key=lambda item: -item[1])
    yield from found


def supported(graph: MemoryGraph, node_id: str) -> Iterator[str]:
    """Concepts and intents this node is direct evidence for."""
    for kind in SUPPORT_IN:
        for edge in graph.out_edges(node_id, kind):
            yield edge.dst
    for kind in SUPPORT_OUT:
        for edge in graph.in_edges(node_id, kind):
            yield edge.src


def _evidence(graph: MemoryGraph, start: str, depth: int, budget: int) -> list[tuple[str, str]]:
    """(evidence node id, RawEvent id) reached from ``start`` through evidence edges, breadth
    first, strongest edges first, at most ``budget``."""
    found: list[tuple[str, str]] = []
    seen = {start}
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    while queue and len(found) < budget:
        current, level = queue.popleft()
        if level >= depth:
            continue
        for other, _ in supporters(graph, current):
            if other in seen:
                continue
            seen.add(other)
            evidence = graph.get(other)
            if evidence is None:
                continue
            if evidence.source_event_id:
                found.append((other, evidence.source_event_id))
                if len(found) >= budget:
                    break
            if evidence.kind != NodeKind.EVENT:
                queue.append((other, level + 1))
    return found


def event_ids(
    graph: MemoryGraph,
    node: Node,
    limit: int,
    depth: int = 2,
    prefer: Mapping[str, float] | None = None,
) -> list[str]:
    """RawEvent ids behind a node: its own for an EVENT (and a FACT's source event), otherwise
    the events reached through evidence edges, breadth first, strongest edges first, bounded.

    With ``prefer`` (node id -> query score), evidence that itself matched the query is cited
    first, so a concept's citations are the turns that answer the query, not just its oldest."""
    if limit <= 0:
        return []
    own: list[str] = []
    if node.source_event_id:
        own.append(node.source_event_id)
        if node.kind == NodeKind.EVENT:
            return own
    budget = limit if not prefer else 4 * limit
    found = _evidence(graph, node.id, depth, budget)
    if prefer:
        order = {nid: i for i, (nid, _) in enumerate(found)}
        found.sort(key=lambda item: (-prefer.get(item[0], 0.0), order[item[0]]))
    out = list(own)
    for _, raw_id in found:
        if raw_id not in out:
            out.append(raw_id)
    return out[:limit]


def citations(
    graph: MemoryGraph,
    node: Node,
    limit: int,
    depth: int,
    score_of: Mapping[str, float],
    surfaced_limit: int,
) -> list[str]:
    """What one query item cites: an EVENT its own id, a FACT its source event first; a
    CONCEPT or INTENT the evidence this query found relevant (a query score), best first, at
    most ``surfaced_limit`` (its strongest evidence when none matched), so a summary does not
    spend the client's budget of cited events on members that do not answer the query."""
    if node.kind not in SURFACED_KINDS:
        return event_ids(graph, node, limit, depth, prefer=score_of)
    reached = _evidence(graph, node.id, depth, 4 * max(limit, surfaced_limit))
    scored = [(nid, raw) for nid, raw in reached if score_of.get(nid, 0.0) > 0.0]
    if scored:
        order = {nid: i for i, (nid, _) in enumerate(scored)}
        scored.sort(key=lambda item: (-score_of[item[0]], order[item[0]]))
    else:
        scored = reached[:1]
    out: list[str] = []
    for _, raw_id in scored:
        if raw_id not in out:
            out.append(raw_id)
    return out[: min(limit, surfaced_limit)]
