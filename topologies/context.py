"""Proactive context assembly (docs/DESIGN.md section 3; CogniFold Eq. 1 and Table 8).

Candidates are bounded, never a full-graph pass:

1. kNN of the event vector in the CONCEPT, INTENT, FACT and EVENT indexes (``knn`` each);
2. their neighbourhood: the strongest ``max_fanout`` edges of each hit (lazily decayed
   weight), breadth-first, at most ``max_candidates`` nodes in all;
3. open intents (pending, action_scheduled, deferred): a wider INTENT kNN, plus every
   intent when the tenant has only a few.

Signals per candidate, each normalised to [0, 1] within the candidate set:
personalized PageRank on the candidate subgraph seeded by the kNN hits (centrality, blended
with access intensity ``log1p(access_count)``: the Hebbian term of Eq. 1), recency
``exp(-dt/tau)``, urgency (deadline within ``urgency_horizon_days``), a type prior and
diversity (MMR: one minus the highest cosine to a node already selected).

Tiers (a node is in one tier only; Immediate is filled first):
Immediate = 0.7 recency + 0.3 urgency; Working = 0.5 centrality + 0.3 recency + 0.2 type;
Background = 0.8 centrality + 0.2 diversity.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt
import structlog
from scipy import sparse

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import IntentStatus
from topologies.config import DECAY_PER_DAY, ContextConfig
from topologies.graph import decayed_weight
from topologies.memory import TenantMemory
from topologies.planner import Context, ContextItem
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

KNN_KINDS = (NodeKind.CONCEPT, NodeKind.INTENT, NodeKind.FACT, NodeKind.EVENT)
TYPE_PRIOR = {
    NodeKind.INTENT: 1.0,
    NodeKind.CONCEPT: 0.8,
    NodeKind.FACT: 0.6,
    NodeKind.EVENT: 0.4,
    NodeKind.TIME: 0.2,
}
OPEN_STATUSES = frozenset(
    {IntentStatus.PENDING, IntentStatus.ACTION_SCHEDULED, IntentStatus.DEFERRED}
)
EDGE_SCAN_CAP = 256  # incident edges looked at per node when picking the strongest
KIND_SCAN_CAP = 12  # ... the newest of each edge kind and direction (= max_fanout: within a
# kind, edges share a prior weight, so the newest are the least decayed)
ALL_INTENTS_CAP = 64  # below this many intents, every open intent is a candidate
ACCESS_SHARE = 0.2  # share of access intensity in the centrality term
DEADLINE_EDGE_CAP = 8
DENSE_PAGERANK_MAX = 256  # nodes: below, dense power iteration is faster (0.8 vs 2.2 ms at 140)


@dataclass
class _Candidate:
    node: Node
    signals: dict[str, float] = field(default_factory=dict)


def assemble_context(
    memory: TenantMemory,
    vector: Vector,
    event_node_id: str,
    now: datetime,
    config: ContextConfig,
    decay_per_day: float = DECAY_PER_DAY,  # the engine passes its config's
) -> Context:
    """The three-tier proactive context of the event ``event_node_id``."""
    knn = _knn(memory, vector, event_node_id, config.knn)
    ids = _expand(memory, list(knn), event_node_id, config, now, decay_per_day)
    ids = _add_open_intents(memory, vector, ids, event_node_id, config)
    if not ids:
        return Context(knn=knn)
    candidates = {nid: _Candidate(memory.graph.node(nid)) for nid in ids}
    _score(memory, candidates, knn, now, config, decay_per_day)
    context = _select(memory, candidates, knn, config)
    log.debug(
        "context_assembled",
        tenant=memory.tenant,
        candidates=len(candidates),
        knn=len(knn),
        immediate=len(context.immediate),
        working=len(context.working),
        background=len(context.background),
    )
    return context


def record_access(memory: TenantMemory, context: Context, now: datetime) -> None:
    """Hebbian bookkeeping inside the fold transaction: selected nodes were accessed."""
    for item in context.items:
        node = memory.graph.get(item.node_id)
        if node is None:
            continue
        memory.graph.update_node(node.id, access_count=node.access_count + 1, last_access=now)


# ------------------------------------------------------------------ candidates


def _knn(memory: TenantMemory, vector: Vector, event_node_id: str, k: int) -> dict[str, float]:
    hits: dict[str, float] = {}
    for kind in KNN_KINDS:
        for node_id, cosine in memory.index(kind).search(vector, k, exclude={event_node_id}):
            if node_id in memory.graph:
                hits[node_id] = cosine
    return hits


def strongest_edges(
    memory: TenantMemory, node_id: str, fanout: int, now: datetime, decay_per_day: float
) -> list[tuple[float, Edge]]:
    """The ``fanout`` strongest incident edges (decayed weight), among a bounded scan: the most
    recently attached edges of each kind and direction (a concept with thousands of members is
    read at its newest, least decayed, evidence, not its oldest)."""
    scanned = itertools.islice(memory.graph.recent_edges(node_id, KIND_SCAN_CAP), EDGE_SCAN_CAP)
    weighted = ((decayed_weight(e, now, decay_per_day), e) for e in scanned)
    return heapq.nlargest(fanout, weighted, key=lambda item: (item[0], item[1].src, item[1].dst))


def _expand(
    memory: TenantMemory,
    seeds: list[str],
    event_node_id: str,
    config: ContextConfig,
    now: datetime,
    decay_per_day: float,
) -> list[str]:
    """Breadth-first over the strongest edges, from the kNN hits, up to max_candidates."""
    ordered = [s for s in seeds if s != event_node_id]
    seen = set(ordered)
    frontier = list(ordered)
    while frontier and len(ordered) < config.max_candidates:
        nxt: list[str] = []
        for node_id in frontier:
            for _, edge in strongest_edges(memory, node_id, config.max_fanout, now, decay_per_day):
                other = edge.dst if edge.src == node_id else edge.src
                if other in seen or other == event_node_id:
                    continue
                seen.add(other)
                ordered.append(other)
                nxt.append(other)
                if len(ordered) >= config.max_candidates:
                    return ordered
        frontier = nxt
    return ordered


def _add_open_intents(
    memory: TenantMemory,
    vector: Vector,
    ids: list[str],
    event_node_id: str,
    config: ContextConfig,
) -> list[str]:
    graph = memory.graph
    if graph.count(NodeKind.INTENT) <= ALL_INTENTS_CAP:
        pool: Iterable[str] = sorted(graph.ids(NodeKind.INTENT))
    else:
        hits = memory.index(NodeKind.INTENT).search(vector, 4 * config.knn)
        pool = [node_id for node_id, _ in hits]
    seen = set(ids)
    out = list(ids)
    for node_id in pool:
        node = graph.get(node_id)
        if node is None or node.id in seen or node.id == event_node_id:
            continue
        if node.status in OPEN_STATUSES:
            out.append(node.id)
            seen.add(node.id)
    return out


# --------------------------------------------------------------------- signals


def _score(
    memory: TenantMemory,
    candidates: dict[str, _Candidate],
    knn: dict[str, float],
    now: datetime,
    config: ContextConfig,
    decay_per_day: float,
) -> None:
    pagerank = _pagerank(memory, candidates, knn, now, config, decay_per_day)
    for node_id, cand in candidates.items():
        node = cand.node
        cand.signals = {
            "knn": max(0.0, knn.get(node_id, 0.0)),
            "pagerank": pagerank.get(node_id, 0.0),
            "recency": _recency(node, now, config.recency_tau_days),
            "access": math.log1p(node.access_count),
            "urgency": _urgency(memory, node, now, config.urgency_horizon_days),
            "type": TYPE_PRIOR[node.kind],
        }
    for name in ("pagerank", "recency", "access", "urgency"):
        top = max(c.signals[name] for c in candidates.values())
        for cand in candidates.values():
            cand.signals[name] = cand.signals[name] / top if top > 0 else 0.0
    for cand in candidates.values():
        s = cand.signals
        s["centrality"] = (1 - ACCESS_SHARE) * s["pagerank"] + ACCESS_SHARE * s["access"]


def _pagerank(
    memory: TenantMemory,
    candidates: dict[str, _Candidate],
    knn: dict[str, float],
    now: datetime,
    config: ContextConfig,
    decay_per_day: float,
) -> dict[str, float]:
    """Personalized PageRank on the candidate subgraph (undirected, decayed weights).

    A sparse power iteration: the subgraph has at most ``max_candidates`` nodes, where
    building a networkx graph per fold cost more than the ranking itself.
    """
    order = sorted(candidates)
    position = {nid: i for i, nid in enumerate(order)}
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []
    for node_id in order:
        i = position[node_id]
        outgoing = memory.graph.recent_edges(node_id, KIND_SCAN_CAP, incoming=False)
        for edge in itertools.islice(outgoing, EDGE_SCAN_CAP):
            j = position.get(edge.dst)
            if j is None or j == i:
                continue
            weight = decayed_weight(edge, now, decay_per_day)
            rows.extend((i, j))
            cols.extend((j, i))
            weights.extend((weight, weight))
    seeds = np.array([max(0.0, knn.get(nid, 0.0)) for nid in order], dtype=np.float64)
    if seeds.sum() <= 0:
        seeds = np.ones(len(order))
    ranks = personalized_pagerank(len(order), rows, cols, weights, seeds, config.pagerank_alpha)
    return {nid: float(ranks[i]) for nid, i in position.items()}


def personalized_pagerank(
    size: int,
    rows: list[int],
    cols: list[int],
    weights: list[float],
    seeds: npt.NDArray[np.float64],
    alpha: float,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> npt.NDArray[np.float64]:
    """PageRank with restart to ``seeds``; dangling mass returns to the seeds (as networkx).

    The fold's and the read path's subgraphs are small (at most a few hundred nodes), where a
    dense matrix-vector product costs microseconds and scipy's sparse one mostly call overhead;
    larger graphs use the sparse matrix.
    """
    teleport = seeds / seeds.sum()
    backward: npt.NDArray[np.float64] | sparse.csr_matrix
    if size <= DENSE_PAGERANK_MAX:
        dense = np.zeros((size, size))
        np.add.at(dense, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)),
                  np.asarray(weights, dtype=np.float64))  # fmt: skip
        out_weight = dense.sum(axis=1)
        dangling = out_weight == 0
        scale = np.divide(1.0, out_weight, out=np.zeros(size), where=~dangling)
        backward = np.ascontiguousarray((dense * scale[:, None]).T)
    else:
        matrix = sparse.csr_matrix((weights, (rows, cols)), shape=(size, size))
        out_weight = np.asarray(matrix.sum(axis=1)).ravel()
        dangling = out_weight == 0
        scale = np.divide(1.0, out_weight, out=np.zeros(size), where=~dangling)
        backward = (sparse.diags(scale) @ matrix).T.tocsr()  # ranks @ P, as P.T @ ranks
    ranks = teleport.copy()
    for _ in range(max_iter):
        previous = ranks
        ranks = alpha * (backward @ previous + previous[dangling].sum() * teleport)
        ranks += (1.0 - alpha) * teleport
        if np.abs(ranks - previous).sum() < size * tol:
            break
    return np.asarray(ranks)


def _recency(node: Node, now: datetime, tau_days: float) -> float:
    """Ebbinghaus kernel on the latest touch: event time, last access, last update."""
    stamps = [node.last_access]
    if node.kind == NodeKind.EVENT:
        stamps.append(node.ts)
    else:
        stamps.extend([node.updated_at, node.created_at])
        if node.kind != NodeKind.TIME:
            stamps.append(node.ts)
    known = [s for s in stamps if s is not None and s <= now]
    if not known:
        return 1.0 if any(s is not None for s in stamps) else 0.0  # all in the future
    days = (now - max(known)).total_seconds() / 86400.0
    return math.exp(-days / max(tau_days, 1e-6))


def _deadlines(memory: TenantMemory, node: Node) -> list[datetime]:
    found: list[datetime] = []
    if node.kind == NodeKind.INTENT and node.deadline is not None:
        found.append(node.deadline)
    if node.kind == NodeKind.TIME:
        anchor = node.deadline or node.ts
        if anchor is not None:
            found.append(anchor)
        return found
    incoming = itertools.islice(memory.graph.in_edges(node.id, EdgeKind.DEADLINE_FOR),
                                DEADLINE_EDGE_CAP)  # fmt: skip
    for edge in incoming:
        anchor_node = memory.graph.get(edge.src)
        if anchor_node is not None:
            anchor = anchor_node.deadline or anchor_node.ts
            if anchor is not None:
                found.append(anchor)
    return found


def _urgency(memory: TenantMemory, node: Node, now: datetime, horizon_days: float) -> float:
    """1 at (or up to a day past) a deadline, falling linearly to 0 at the horizon."""
    if node.kind == NodeKind.INTENT and node.status not in OPEN_STATUSES:
        return 0.0
    best = 0.0
    for deadline in _deadlines(memory, node):
        days = (deadline - now).total_seconds() / 86400.0
        if -1.0 <= days <= 0.0:
            best = 1.0
        elif 0.0 < days <= horizon_days:
            best = max(best, 1.0 - days / horizon_days)
    return best


# ------------------------------------------------------------------- selection


def _tier_item(cand: _Candidate, tier: str, score: float) -> ContextItem:
    node = cand.node
    signals = {name: round(value, 6) for name, value in cand.signals.items()}
    return ContextItem(node.id, node.kind, node.title or node.text[:80], round(score, 6), tier,
                       signals)  # fmt: skip


def _ranked(candidates: dict[str, _Candidate], pool: set[str], weights: dict[str, float]) -> list:
    def score(nid: str) -> float:
        return sum(w * candidates[nid].signals[name] for name, w in weights.items())

    return sorted(((score(nid), nid) for nid in pool), key=lambda item: (-item[0], item[1]))


def _select(
    memory: TenantMemory,
    candidates: dict[str, _Candidate],
    knn: dict[str, float],
    config: ContextConfig,
) -> Context:
    remaining = set(candidates)
    immediate: list[ContextItem] = []
    for score, nid in _ranked(candidates, remaining, {"recency": 0.7, "urgency": 0.3}):
        if len(immediate) >= config.immediate or score <= 0:
            break
        immediate.append(_tier_item(candidates[nid], "immediate", score))
    remaining -= {item.node_id for item in immediate}
    working: list[ContextItem] = []
    weights = {"centrality": 0.5, "recency": 0.3, "type": 0.2}
    for score, nid in _ranked(candidates, remaining, weights)[: config.working]:
        working.append(_tier_item(candidates[nid], "working", score))
    remaining -= {item.node_id for item in working}
    chosen = [item.node_id for item in [*immediate, *working]]
    background = _mmr(memory, candidates, remaining, chosen, config.background)
    return Context(immediate=immediate, working=working, background=background, knn=knn)


def _mmr(
    memory: TenantMemory,
    candidates: dict[str, _Candidate],
    pool: set[str],
    chosen: list[str],
    budget: int,
) -> list[ContextItem]:
    """Background: greedy 0.8 centrality + 0.2 diversity, diversity against all selected.

    The highest cosine of each remaining node to the selection is kept as a vector and
    updated once per pick, so a pick costs one matrix-vector product.
    """
    left = sorted(pool)
    if not left:
        return []
    dim = memory.dim
    vectors = [memory.vector(nid) for nid in left]
    has_vec = np.array([v is not None for v in vectors])
    matrix = np.stack([v if v is not None else np.zeros(dim, np.float32) for v in vectors])
    best_sim = np.full(len(left), -np.inf)
    for nid in chosen:
        vec = memory.vector(nid)
        if vec is not None:
            best_sim = np.maximum(best_sim, matrix @ vec)
    centrality = np.array([candidates[nid].signals["centrality"] for nid in left])
    taken = np.zeros(len(left), dtype=bool)
    out: list[ContextItem] = []
    while len(out) < min(budget, len(left)):
        diversity = np.where(
            has_vec & np.isfinite(best_sim), np.clip(1.0 - best_sim, 0.0, 1.0), 1.0
        )
        score = np.where(taken, -np.inf, 0.8 * centrality + 0.2 * diversity)
        pick = int(np.argmax(score))  # first maximum: ties go to the smaller id (sorted)
        taken[pick] = True
        nid = left[pick]
        candidates[nid].signals["diversity"] = float(diversity[pick])
        out.append(_tier_item(candidates[nid], "background", float(score[pick])))
        if has_vec[pick]:
            best_sim = np.maximum(best_sim, matrix @ matrix[pick])
    return out
