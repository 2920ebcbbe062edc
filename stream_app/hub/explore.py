"""Bounded views of a tenant's memory for the explorer page (``/ui``) and the MCP server.

Every view costs what it returns, whatever the graph's size: intents are paged and filtered
here (not in the page), a neighbourhood holds at most ``limit`` neighbours (a hub concept's
most recently attached edges of each kind, ``MemoryGraph.recent_edges``), a chain is the read
path's walk (``topologies.read.chains``), node lists are paged after a filter. Views take a
:class:`~stream_app.hub.Hub` and a tenant, so they serve an embedded data dir and a Kafka
worker alike (``hub.view``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from schemas.errors import NotFoundError
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import OPEN_STATUSES, Intent, IntentStatus
from stream_app.hub.protocol import Hub
from stream_app.hub.views import edge_json, node_time, stream_clock
from topologies.graph import MemoryGraph
from topologies.intents import intent_view
from topologies.memory import TenantMemory, event_node_id
from topologies.read.chains import chain_for_hit, chain_of, has_chain

# the board's columns: what a person does next with an intent
BOARD: dict[str, tuple[IntentStatus, ...]] = {
    "pending": (IntentStatus.PENDING,),
    "scheduled": (IntentStatus.ACTION_SCHEDULED,),
    "deferred": (IntentStatus.DEFERRED,),
    "resolved": (IntentStatus.RESOLVED,),
    "closed": (IntentStatus.REJECTED, IntentStatus.EXPIRED),
}
MAX_PAGE = 200
MAX_NEIGHBOURS = 200
TEXT_PREVIEW = 280  # characters of a node's text in a list or a drawing
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


@dataclass(frozen=True)
class Page:
    offset: int = 0
    limit: int = 50

    def slice(self, items: list[Any]) -> list[Any]:
        return items[self.offset : self.offset + min(self.limit, MAX_PAGE)]


def tenants(hub: Hub) -> list[dict[str, Any]]:
    """The tenant picker's list: node and open-intent counts, without walking any graph
    (``GET /tenants`` also counts edges and events, which costs a pass over each)."""
    found = []
    for name in hub.tenants():
        graph = hub.view(name).graph
        open_intents = sum(1 for n in graph.nodes(NodeKind.INTENT) if n.status in OPEN_STATUSES)
        found.append({"tenant": name, "nodes": graph.count(), "open_intents": open_intents})
    return found


def why(intent: Intent) -> str:
    """The sentence that says why an intent emerged: the first of its description."""
    text = " ".join(intent.description.split())
    if not text:
        return ""
    return _SENTENCE.split(text, maxsplit=1)[0]


def preview(text: str, size: int = TEXT_PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1].rstrip() + "…"


def node_brief(node: Node) -> dict[str, Any]:
    """What a list or a drawing shows of a node."""
    return {
        "id": node.id,
        "kind": node.kind.value,
        "title": node.title or preview(node.text, 80),
        "text": preview(node.text),
        "ts": node.ts.isoformat() if node.ts else None,
        "source": node.source,
        "source_event_id": node.source_event_id,
        "status": node.status.value if node.status else None,
    }


def intent_card(intent: Intent) -> dict[str, Any]:
    return {
        "id": intent.id,
        "title": intent.title,
        "status": intent.status.value,
        "category": intent.category,
        "deadline": intent.deadline.isoformat() if intent.deadline else None,
        "created_at": intent.created_at.isoformat(),
        "why": why(intent),
        "evidence": len(intent.evidence_event_ids),
        "concepts": intent.supporting_labels,
    }


def _statuses(column: str | None) -> tuple[IntentStatus, ...] | None:
    if column is None or column == "all":
        return None
    if column in BOARD:
        return BOARD[column]
    try:
        return (IntentStatus(column),)
    except ValueError as exc:
        known = ", ".join([*BOARD, "all", *(s.value for s in IntentStatus)])
        raise ValueError(f"unknown status {column[:40]!r}; use one of {known}") from exc


def intents_page(
    hub: Hub,
    tenant: str,
    status: str | None = None,
    category: str | None = None,
    page: Page | None = None,
) -> dict[str, Any]:
    """One page of a board column (``status``: a column of :data:`BOARD`, a status, or all),
    soonest deadline first, with each column's count and the categories present."""
    memory = hub.view(tenant)
    wanted = _statuses(status)
    nodes = list(memory.graph.nodes(NodeKind.INTENT))
    counts = {name: sum(1 for n in nodes if n.status in states) for name, states in BOARD.items()}
    categories = sorted({n.category or "general" for n in nodes})
    chosen = [
        n
        for n in nodes
        if (wanted is None or n.status in wanted)
        and (category is None or (n.category or "general") == category)
    ]
    chosen.sort(  # soonest deadline first, those without one last, newest first among equals
        key=lambda n: (
            n.deadline is None,
            n.deadline.timestamp() if n.deadline else 0.0,
            -n.created_at.timestamp(),
            n.id,
        )
    )
    page = page or Page()
    items = [intent_card(intent_view(memory, n)) for n in page.slice(chosen)]
    return {
        "tenant": tenant,
        "status": status or "all",
        "category": category,
        "total": len(chosen),
        "offset": page.offset,
        "counts": counts,
        "categories": categories,
        "items": items,
    }


def _evidence_events(memory: TenantMemory, event_ids: Iterable[str]) -> list[dict[str, Any]]:
    found = []
    for event_id in event_ids:
        node = memory.graph.get(event_node_id(memory.tenant, event_id))
        if node is not None:
            found.append(node_brief(node))
    return sorted(found, key=lambda e: (e["ts"] or "", e["id"]))


def events(hub: Hub, tenant: str, event_ids: Iterable[str]) -> dict[str, Any]:
    """The EVENT nodes of RawEvent ids (a hit's citations), oldest first; unknown ids are
    left out."""
    return {"tenant": tenant, "events": _evidence_events(hub.view(tenant), event_ids)}


def intent_detail(hub: Hub, tenant: str, intent_id: str) -> dict[str, Any]:
    """An intent with its evidence events (oldest first), supporting concepts and why it
    emerged."""
    memory = hub.view(tenant)
    node = memory.graph.get(intent_id)
    if node is None or node.kind != NodeKind.INTENT:
        raise NotFoundError(f"intent {intent_id!r} not found in tenant {tenant!r}")
    intent = intent_view(memory, node)
    concepts = [memory.graph.get(c) for c in intent.supporting_concepts]
    return {
        "tenant": tenant,
        "intent": intent.model_dump(mode="json"),
        "why": why(intent),
        "evidence": _evidence_events(memory, intent.evidence_event_ids),
        "concepts": [node_brief(c) for c in concepts if c is not None],
    }


def neighbourhood(
    hub: Hub, tenant: str, node_id: str, limit: int = 40, kind: NodeKind | None = None
) -> dict[str, Any]:
    """A node and at most ``limit`` neighbours (optionally of one kind): among its most
    recently attached edges, the strongest of each link kind in turn, with the edges between
    the node and them.
    ``neighbour_count`` (every neighbour; with ``kind``, those among the recent edges read)
    and ``degree`` let the page say what it did not draw."""
    memory = hub.view(tenant)
    graph = memory.graph
    center = graph.get(node_id)
    if center is None:
        raise NotFoundError(f"node {node_id!r} not found in tenant {tenant!r}")
    limit = max(1, min(limit, MAX_NEIGHBOURS))
    now = stream_clock(memory)
    config = hub.engine.config
    best: dict[str, tuple[float, Edge]] = {}
    edges: list[Edge] = []
    for edge in graph.recent_edges(center.id, per_kind=limit):
        other = edge.dst if edge.src == center.id else edge.src
        neighbour = graph.get(other)
        if neighbour is None or (kind is not None and neighbour.kind != kind):
            continue
        weight = edge_json(edge, now, config)["weight"]
        edges.append(edge)
        if other not in best or weight > best[other][0]:
            best[other] = (weight, edge)
    ranked = _round_robin(best, limit)
    kept = set(ranked)
    neighbours = [graph.node(i) for i in ranked]
    everyone = len(graph.neighbors(center.id)) if kind is None else len(best)
    return {
        "tenant": tenant,
        "requested_id": node_id,
        "node": node_brief(center),
        "degree": graph.degree(center.id),  # links of every kind, drawn or not
        "neighbour_count": everyone,
        "neighbours": [node_brief(n) for n in neighbours],
        "edges": [
            edge_json(e, now, config)
            for e in sorted(edges, key=lambda e: (e.kind.value, e.src, e.dst))
            if (e.dst if e.src == center.id else e.src) in kept
        ],
        "truncated": everyone > len(neighbours),
        "has_chain": len(chain_for_hit(graph, center)) > 1,
    }


def _round_robin(best: dict[str, tuple[float, Edge]], limit: int) -> list[str]:
    """The strongest neighbours of each link kind in turn: a few TRIGGERS or PART_OF links
    are not crowded out by a hundred REINFORCES."""
    groups: dict[str, list[str]] = {}
    for node_id in sorted(best, key=lambda i: (-best[i][0], i)):
        groups.setdefault(best[node_id][1].kind.value, []).append(node_id)
    ranked: list[str] = []
    queues = [groups[k] for k in sorted(groups)]
    while len(ranked) < limit and any(queues):
        for queue in queues:
            if queue and len(ranked) < limit:
                ranked.append(queue.pop(0))
    return ranked


def chain(hub: Hub, tenant: str, node_id: str) -> dict[str, Any]:
    """A belief's supersedes chain, oldest first (for an EVENT: that of the revision read
    from it); a node without one is a chain of itself."""
    memory = hub.view(tenant)
    graph = memory.graph
    start = graph.get(node_id)
    if start is None:
        raise NotFoundError(f"node {node_id!r} not found in tenant {tenant!r}")
    links = chain_for_hit(graph, start) or chain_of(graph, start.id)
    newest = links[-1].id if links else None
    return {
        "tenant": tenant,
        "requested_id": node_id,
        "links": [
            {
                **node_brief(n),
                "text": n.text,
                "valid_from": n.valid_from.isoformat() if n.valid_from else None,
                "valid_to": n.valid_to.isoformat() if n.valid_to else None,
                "current": n.id == newest,
                "events": [n.source_event_id] if n.source_event_id else [],
            }
            for n in links
        ],
    }


def _newest_revision(graph: MemoryGraph, node: Node) -> bool:
    return (
        has_chain(graph, node)
        and node.superseded_by is None
        and next(graph.in_edges(node.id, EdgeKind.SUPERSEDES), None) is None
    )


def nodes_page(
    hub: Hub,
    tenant: str,
    kind: NodeKind | None = None,
    text: str | None = None,
    chained: bool = False,
    page: Page | None = None,
) -> dict[str, Any]:
    """Nodes of a kind whose title or text holds ``text`` (case-insensitive), newest first;
    ``chained``: only the newest revision of each supersedes chain."""
    memory = hub.view(tenant)
    graph = memory.graph
    needle = text.casefold() if text else None
    chosen = []
    for node in graph.nodes(kind):
        if chained and not _newest_revision(graph, node):
            continue
        if needle and needle not in node.title.casefold() and needle not in node.text.casefold():
            continue
        chosen.append(node)
    chosen.sort(key=lambda n: (node_time(n), n.id), reverse=True)
    page = page or Page()
    return {
        "tenant": tenant,
        "total": len(chosen),
        "offset": page.offset,
        "items": [node_brief(n) for n in page.slice(chosen)],
    }
