"""Read-only views of a TenantMemory shared by the API and the CLI (JSON-ready dicts)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from schemas.graph import Edge, Node, NodeKind
from schemas.intents import Intent, IntentStatus
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.graph import decayed_weight
from topologies.intents import intent_view
from topologies.llm.usage import folded_by as folded_by_report
from topologies.memory import EMBEDDED_KINDS, TenantMemory
from topologies.planner import PLANNED_BY_KEY, Planner


def node_json(node: Node) -> dict[str, Any]:
    return node.model_dump(mode="json")


def stream_clock(memory: TenantMemory) -> datetime | None:
    value = memory.meta.get("clock")
    return datetime.fromisoformat(value) if value else None


def edge_json(edge: Edge, now: datetime | None, config: EngineConfig) -> dict[str, Any]:
    data = edge.model_dump(mode="json")
    lam = config.consolidation.decay_per_day
    data["weight"] = edge.w0 if now is None else round(decayed_weight(edge, now, lam), 6)
    return data


def node_time(node: Node) -> datetime:
    return node.ts or node.created_at


def snapshot(
    memory: TenantMemory,
    config: EngineConfig,
    kind: NodeKind | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Nodes (filtered by kind and time) and the edges among them."""
    nodes = []
    for node in memory.graph.nodes(kind):
        when = node_time(node)
        if since is not None and when < since:
            continue
        if until is not None and when > until:
            continue
        nodes.append(node)
    nodes.sort(key=lambda n: (node_time(n), n.id))
    truncated = limit is not None and len(nodes) > limit
    if limit is not None:
        nodes = nodes[:limit]
    ids = {n.id for n in nodes}
    now = stream_clock(memory)
    edges = [e for e in memory.graph.edges() if e.src in ids and e.dst in ids]
    edges.sort(key=lambda e: (e.src, e.dst, e.kind.value))
    return {
        "tenant": memory.tenant,
        "clock": now.isoformat() if now else None,
        "truncated": truncated,
        "nodes": [node_json(n) for n in nodes],
        "edges": [edge_json(e, now, config) for e in edges],
    }


def neighbourhood(memory: TenantMemory, node_id: str, config: EngineConfig) -> dict[str, Any]:
    """A node (aliases of merged nodes resolve) with its incident edges and neighbours."""
    node = memory.graph.node(node_id)
    now = stream_clock(memory)
    edges = sorted(memory.graph.incident(node.id), key=lambda e: (e.kind.value, e.src, e.dst))
    neighbours = sorted(memory.graph.neighbors(node.id))
    return {
        "tenant": memory.tenant,
        "requested_id": node_id,
        "node": node_json(node),
        "edges": [edge_json(e, now, config) for e in edges],
        "neighbours": [
            {"id": n.id, "kind": n.kind.value, "title": n.title}
            for n in (memory.graph.node(i) for i in neighbours)
        ],
    }


def intents(memory: TenantMemory, status: IntentStatus | None = None) -> list[Intent]:
    found = [
        intent_view(memory, node)
        for node in memory.graph.nodes(NodeKind.INTENT)
        if status is None or node.status == status
    ]
    return sorted(found, key=lambda i: (i.created_at, i.id))


def folded_by(memory: TenantMemory, planner: Planner) -> dict[str, Any]:
    """Which planner folded the tenant's events, from the engine's counts in the tenant's state
    and the planner's usage ledger in this process (an LLM planner's; none: no fallbacks)."""
    ledger = getattr(planner, "ledger", None)
    counters = ledger.tenant_totals(memory.tenant) if ledger is not None else {}
    folded = sum(1 for state in memory.event_states.values() if state == "folded")
    return folded_by_report(dict(memory.meta.get(PLANNED_BY_KEY) or {}), counters, folded)


def search(
    memory: TenantMemory, embedder: Embedder, query: str, k: int = 10
) -> list[dict[str, Any]]:
    """Basic search: dense kNN over the kind indexes plus a case-insensitive substring match."""
    scores: dict[str, float] = {}
    matched: dict[str, set[str]] = {}
    if query.strip():
        vector = embedder.embed([query])[0]
        for kind in EMBEDDED_KINDS:
            for node_id, score in memory.index(kind).search(vector, k):
                scores[node_id] = max(scores.get(node_id, -1.0), score)
                matched.setdefault(node_id, set()).add("dense")
        needle = query.casefold()
        for node in memory.graph.nodes():
            if needle in node.title.casefold() or needle in node.text.casefold():
                vec = memory.vector(node.id)
                base = float(np.dot(vec, vector)) if vec is not None else 0.0
                scores[node.id] = max(scores.get(node.id, base), base) + 1.0
                matched.setdefault(node.id, set()).add("substring")
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
    hits = []
    for node_id, score in ranked:
        found = memory.graph.get(node_id)
        if found is None:
            continue
        hits.append(
            {"score": round(score, 6), "match": sorted(matched[node_id]), "node": node_json(found)}
        )
    return hits


def export_json(memory: TenantMemory, config: EngineConfig) -> dict[str, Any]:
    snap = snapshot(memory, config)
    return {"tenant": memory.tenant, "nodes": snap["nodes"], "edges": snap["edges"]}


def _flat(value: Any) -> str | int | float | bool:
    if isinstance(value, bool | int | float | str):
        return value
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, default=str)


def export_graphml(memory: TenantMemory, config: EngineConfig, path: Path) -> None:
    snap = export_json(memory, config)
    g = nx.MultiDiGraph()
    for node in snap["nodes"]:
        g.add_node(node["id"], **{k: _flat(v) for k, v in node.items() if k != "id"})
    for edge in snap["edges"]:
        g.add_edge(
            edge["src"], edge["dst"], key=edge["kind"], **{k: _flat(v) for k, v in edge.items()}
        )
    nx.write_graphml(g, path)
