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

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import structlog
from scipy import sparse

from schemas.graph import Edge, Node, NodeKind
from schemas.intents import IntentStatus
from topologies.config import DECAY_PER_DAY, ContextConfig
from topologies.edge_cache import NodeEdges, decayed
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
ALL_INTENTS_CAP = 64  # below this many intents, every open intent is a candidate
ACCESS_SHARE = 0.2  # share of access intensity in the centrality term
DENSE_PAGERANK_MAX = 256  # nodes: below, dense power iteration is faster (0.8 vs 2.2 ms at 140)


SIGNALS = ("knn", "pagerank", "recency", "access", "urgency", "type", "centrality")


@dataclass
class _Table:
    """The candidates (sorted by id) and their signals, one array per signal."""

    ids: list[str]
    nodes: list[Node]
    values: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    _rows: npt.NDArray[np.float64] | None = None  # SIGNALS by candidate, once all are in

    def signals(self, i: int) -> dict[str, float]:
        """The candidate's signals (``SIGNALS``, in order), each rounded to six places: one
        row of a matrix made once per fold, not a look-up per signal and selected node."""
        if self._rows is None:
            self._rows = np.column_stack([self.values[name] for name in SIGNALS])
        return dict(
            zip(SIGNALS, [round(value, 6) for value in self._rows[i].tolist()], strict=True)
        )


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
    table = _score(memory, sorted(set(ids)), knn, now, config, decay_per_day)
    context = _select(memory, table, knn, config)
    log.debug(
        "context_assembled",
        tenant=memory.tenant,
        candidates=len(table.ids),
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
    read at its newest, least decayed, evidence, not its oldest). Kept per node between folds
    (``memory.edge_cache``): the order does not change with time."""
    top = memory.edge_cache.strongest(memory.graph, node_id, fanout, decay_per_day)
    return [(decayed_weight(edge, now, decay_per_day), edge) for _, edge in top]


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
    cache, graph = memory.edge_cache, memory.graph
    while frontier and len(ordered) < config.max_candidates:
        nxt: list[str] = []
        for entry in cache.many(graph, frontier, decay_per_day):  # one look-up per level
            for other, _ in entry.ranked[: config.max_fanout]:
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
    order: list[str],
    knn: dict[str, float],
    now: datetime,
    config: ContextConfig,
    decay_per_day: float,
) -> _Table:
    nodes = memory.graph.nodes_of(order)
    table = _Table(order, nodes)
    tau, horizon = config.recency_tau_days, config.urgency_horizon_days
    values = table.values
    # the candidates' edges, read once for the PageRank and the deadlines
    entries = memory.edge_cache.many(memory.graph, order, decay_per_day)
    values["knn"] = np.array([max(0.0, knn.get(nid, 0.0)) for nid in order])
    values["pagerank"] = _pagerank(entries, values["knn"], now, config, decay_per_day)
    values["recency"] = _recencies(memory, nodes, now, tau)
    values["access"] = np.array([math.log1p(node.access_count) for node in nodes])
    values["urgency"] = _urgencies(memory, nodes, entries, now, horizon)
    values["type"] = np.array([TYPE_PRIOR[node.kind] for node in nodes])
    for name in ("pagerank", "recency", "access", "urgency"):
        top = float(values[name].max())
        values[name] = values[name] / top if top > 0 else np.zeros(len(order))
    values["centrality"] = (1 - ACCESS_SHARE) * values["pagerank"] + ACCESS_SHARE * values["access"]
    return table


def _pagerank(
    entries: list[NodeEdges],
    seeds: npt.NDArray[np.float64],
    now: datetime,
    config: ContextConfig,
    decay_per_day: float,
) -> npt.NDArray[np.float64]:
    """Personalized PageRank on the candidate subgraph (undirected, decayed weights), seeded
    by the candidates' kNN cosines (``seeds``; both in the candidates' order).

    A sparse power iteration: the subgraph has at most ``max_candidates`` nodes, where
    building a networkx graph per fold cost more than the ranking itself.
    """
    size = len(entries)
    keys = np.array([e.key for e in entries], dtype=np.int64)
    # every candidate's kept outgoing edges in one array, in candidate order; those whose
    # target is another candidate are the subgraph's edges
    out = np.concatenate([e.out for e in entries], axis=1)
    rows = cols = np.zeros(0, dtype=np.intp)
    weights = np.zeros(0)
    if out.shape[1]:
        targets = out[0].astype(np.int64)
        sources = np.repeat(np.arange(size), [e.out.shape[1] for e in entries])
        by_key = np.argsort(keys)
        at = np.minimum(np.searchsorted(keys, targets, sorter=by_key), len(keys) - 1)
        found = by_key[at]
        inside = (keys[found] == targets) & (found != sources)
        src, dst = sources[inside], found[inside]
        weight = decayed(out[1][inside], out[2][inside], now, decay_per_day)  # once per fold
        # both directions of each edge, pair by pair (duplicates add up in the same order)
        rows = np.column_stack([src, dst]).ravel()
        cols = np.column_stack([dst, src]).ravel()
        weights = np.repeat(weight, 2)
    if seeds.sum() <= 0:
        seeds = np.ones(size)
    return personalized_pagerank(size, rows, cols, weights, seeds, config.pagerank_alpha)


def personalized_pagerank(
    size: int,
    rows: npt.ArrayLike,
    cols: npt.ArrayLike,
    weights: npt.ArrayLike,
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
    restart = (1.0 - alpha) * teleport
    spill = np.flatnonzero(dangling)  # the dangling nodes' mass returns to the seeds
    return _power_iteration(backward, teleport, restart, spill, alpha, size * tol, max_iter)


def _power_iteration(
    backward: npt.NDArray[np.float64] | sparse.csr_matrix,
    teleport: npt.NDArray[np.float64],
    restart: npt.NDArray[np.float64],
    spill: npt.NDArray[np.intp],
    alpha: float,
    tol: float,
    max_iter: int,
) -> npt.NDArray[np.float64]:
    """``ranks = alpha * (backward @ ranks + spilled mass * teleport) + restart`` until the
    ranks move less than ``tol`` (L1). Each step's arrays are written into buffers kept for
    the whole iteration, the same operations in the same order as fresh arrays would be: a
    fold's PageRank is some forty steps on a few hundred nodes, where allocation cost as much
    as arithmetic."""
    dense = isinstance(backward, np.ndarray)
    ranks, previous = teleport.copy(), np.empty_like(teleport)
    step, gap, spilled = (np.empty_like(teleport) for _ in range(3))
    # the ufuncs themselves: ``ndarray.sum`` is ``np.add.reduce`` behind two Python calls,
    # and a step is a dozen such calls on a few hundred numbers
    add, multiply, subtract, absolute, total = (
        np.add,
        np.multiply,
        np.subtract,
        np.abs,
        np.add.reduce,
    )
    for _ in range(max_iter):
        ranks, previous = previous, ranks
        if dense:
            np.matmul(backward, previous, out=step)
        else:
            step = backward @ previous
        if len(spill):
            add(step, multiply(teleport, total(previous[spill]), out=spilled), out=step)
        multiply(step, alpha, out=ranks)
        add(ranks, restart, out=ranks)
        subtract(ranks, previous, out=gap)
        if total(absolute(gap, out=gap)) < tol:
            break
    return ranks


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)


def _micros(stamp: datetime) -> int:
    """Microseconds since the epoch, exactly: the recency of a candidate is computed on
    integers, where datetime arithmetic between two time-zone objects costs a microsecond
    an operation. A naive stamp is read against a naive epoch (the difference of two naive
    stamps is the same)."""
    epoch = _NAIVE_EPOCH if stamp.utcoffset() is None else _EPOCH
    return (stamp - epoch) // _MICROSECOND


def _touches(node: Node, kept: dict[int, tuple[datetime, int]]) -> tuple[int, ...]:
    """The node's touches (``_micros``), latest first: event time, last access, last
    update. ``kept`` (``NodeMemo.stamps``) holds the ``_micros`` of stamp objects read
    before, by identity: a fold reads the touches of some thirty new versions of nodes (their
    access counted), whose stamps but the last access are those of the version before."""
    stamps = [node.last_access]
    if node.kind == NodeKind.EVENT:
        stamps.append(node.ts)
    else:
        stamps.extend([node.updated_at, node.created_at])
        if node.kind != NodeKind.TIME:
            stamps.append(node.ts)
    micros: list[int] = []
    for stamp in stamps:
        if stamp is None:
            continue
        found = kept.get(id(stamp))
        if found is None or found[0] is not stamp:
            found = kept[id(stamp)] = (stamp, _micros(stamp))
        micros.append(found[1])
    return tuple(sorted(micros, reverse=True))


_UNTOUCHED = -(2**62)  # ``_latest_touch`` of a node without touches: recency 0
_AHEAD = 2**62  # ... of one touched only after ``now`` (an event from the future): recency 1


def _latest_touch(touches: tuple[int, ...], now: int) -> int:
    """The latest of the touches (latest first) up to ``now``, else ``_AHEAD`` or
    ``_UNTOUCHED``."""
    return next((t for t in touches if t <= now), _AHEAD if touches else _UNTOUCHED)


def _all_touches(memory: TenantMemory) -> Callable[[list[Node]], list[tuple[int, ...]]]:
    """``_touches`` of each node, with the tenant's kept stamps (bounded: all are forgotten
    past ``NodeMemo.max_nodes``)."""
    kept = memory.node_memo.stamps
    if len(kept) >= memory.node_memo.max_nodes:
        kept.clear()
    return lambda nodes: [_touches(node, kept) for node in nodes]


def _recencies(
    memory: TenantMemory, nodes: list[Node], now: datetime, tau_days: float
) -> npt.NDArray[np.float64]:
    """The recency of each node: the Ebbinghaus kernel ``exp(-days / tau)`` on its latest
    touch up to ``now``, 1 when all its touches are later, 0 without any.

    The candidate set at once (a fold scores about 160 candidates): a node's touches are read
    once per version of the node (``node_memo``), the days since each latest touch are one
    integer array (exact: differences of microseconds far below 2**53, divided as the scalar
    formula divides them) and the kernel is ``math.exp`` of each, so the days are
    ``timedelta.total_seconds() / 86400`` and the kernel the scalar one, to the bit."""
    at = _micros(now)
    touches = memory.node_memo.many("touch_micros", nodes, _all_touches(memory))
    latest = np.array(
        [t[0] if t and t[0] <= at else _latest_touch(t, at) for t in touches], dtype=np.int64
    )
    dated = (latest != _UNTOUCHED) & (latest != _AHEAD)
    days = np.where(dated, (at - latest) / 1_000_000 / 86400.0, 0.0)
    exponents = -days / max(tau_days, 1e-6)
    kernel = np.fromiter(map(math.exp, exponents.tolist()), dtype=np.float64, count=len(nodes))
    return np.where(dated, kernel, np.where(latest == _AHEAD, 1.0, 0.0))


def _deadline_score(deadline: int, now: int, horizon_days: float) -> float:
    """1 at (or up to a day past) ``deadline``, falling linearly to 0 at the horizon (both
    in ``_micros``: the days are ``timedelta.total_seconds() / 86400`` to the bit)."""
    days = (deadline - now) / 1_000_000 / 86400.0
    if -1.0 <= days <= 0.0:
        return 1.0
    if 0.0 < days <= horizon_days:
        return 1.0 - days / horizon_days
    return 0.0


def _own_deadline(node: Node) -> int | None:
    """An intent's deadline (``_micros``)."""
    return None if node.deadline is None else _micros(node.deadline)


def _anchor(node: Node) -> int | None:
    """When a TIME node (or another DEADLINE_FOR source) falls: its deadline, else its time."""
    stamp = node.deadline or node.ts
    return None if stamp is None else _micros(stamp)


@dataclass
class _Deadlines:
    """The urgency of deadlines at one fold's ``now`` (``_micros``). A node's own deadline is
    converted once per version of the node (``node_memo``), and the DEADLINE_FOR source that
    anchors many candidates (a busy day, a concept's dates) is scored once per fold."""

    memory: TenantMemory
    now: int
    horizon_days: float
    anchors: dict[str, float] = field(default_factory=dict)  # anchoring node id -> score

    def score(self, stamp: int | None) -> float:
        return 0.0 if stamp is None else _deadline_score(stamp, self.now, self.horizon_days)

    def anchored(self, sources: list[str]) -> float:
        """The best score among the anchors of DEADLINE_FOR sources (0 without any)."""
        anchors = self.anchors
        for source in sources:
            if source not in anchors:
                node = self.memory.graph.get(source)
                stamp = None if node is None else self.memory.node_memo.get("anchor", node, _anchor)
                anchors[source] = self.score(stamp)
        return max(map(anchors.__getitem__, sources), default=0.0)

    def urgency(self, node: Node, sources: list[str]) -> float:
        """The best score among the node's deadlines: its own (an intent's deadline, a TIME
        node's anchor) and those of ``sources``, its first ``DEADLINE_EDGE_CAP``
        DEADLINE_FOR sources."""
        kind = node.kind
        if kind == NodeKind.INTENT and node.status not in OPEN_STATUSES:
            return 0.0
        memo = self.memory.node_memo
        if kind == NodeKind.TIME:
            return self.score(memo.get("anchor", node, _anchor))
        best = 0.0
        if kind == NodeKind.INTENT:
            best = self.score(memo.get("deadline", node, _own_deadline))
        return max(best, self.anchored(sources))


def _urgencies(
    memory: TenantMemory,
    nodes: list[Node],
    entries: list[NodeEdges],
    now: datetime,
    horizon_days: float,
) -> npt.NDArray[np.float64]:
    """The urgency of each node (``entries``: their edges): 1 at (or up to a day past) a
    deadline, falling linearly to 0 at the horizon; zero without a look for the many that
    cannot have a deadline (neither an intent nor a TIME node, and no DEADLINE_FOR edge in).
    The kinds are compared as strings: a kind in a set of kinds hashes the enum member by a
    Python call, and a fold asks this of every candidate."""
    out = np.zeros(len(nodes))
    deadlines = _Deadlines(memory, _micros(now), horizon_days)
    intent, dated = NodeKind.INTENT, NodeKind.TIME
    for i, (node, entry) in enumerate(zip(nodes, entries, strict=True)):
        sources = entry.deadline_sources
        if sources or node.kind == intent or node.kind == dated:
            out[i] = deadlines.urgency(node, sources)
    return out


# ------------------------------------------------------------------- selection


def _tier_item(table: _Table, i: int, tier: str, score: float) -> ContextItem:
    node = table.nodes[i]
    return ContextItem(node.id, node.kind, node.title or node.text[:80], round(score, 6), tier,
                       table.signals(i))  # fmt: skip


def _ranked(
    table: _Table, pool: npt.NDArray[np.bool_], weights: dict[str, float]
) -> list[tuple[float, int]]:
    """(score, position) of the pool's candidates, best first, ties by id."""
    score = np.zeros(len(table.ids))
    for name, weight in weights.items():
        score = score + weight * table.values[name]
    picks = np.flatnonzero(pool)
    ranked = picks[np.argsort(-score[picks], kind="stable")]  # ids are sorted: ties by id
    return list(zip(score[ranked].tolist(), ranked.tolist(), strict=True))


def _select(
    memory: TenantMemory,
    table: _Table,
    knn: dict[str, float],
    config: ContextConfig,
) -> Context:
    remaining = np.ones(len(table.ids), dtype=bool)
    immediate: list[ContextItem] = []
    for score, i in _ranked(table, remaining, {"recency": 0.7, "urgency": 0.3}):
        if len(immediate) >= config.immediate or score <= 0:
            break
        immediate.append(_tier_item(table, i, "immediate", score))
        remaining[i] = False
    working: list[ContextItem] = []
    weights = {"centrality": 0.5, "recency": 0.3, "type": 0.2}
    for score, i in _ranked(table, remaining, weights)[: config.working]:
        working.append(_tier_item(table, i, "working", score))
        remaining[i] = False
    chosen = np.flatnonzero(~remaining)  # in no particular order: a maximum is one
    background = _mmr(memory, table, remaining, chosen, config.background)
    return Context(immediate=immediate, working=working, background=background, knn=knn)


def _mmr(
    memory: TenantMemory,
    table: _Table,
    pool: npt.NDArray[np.bool_],
    chosen: npt.NDArray[np.intp],
    budget: int,
) -> list[ContextItem]:
    """Background: greedy 0.8 centrality + 0.2 diversity, diversity against all selected.

    The highest cosine of each remaining node to the selection is kept as a vector and
    updated once per pick, so a pick costs one matrix-vector product.
    """
    left = np.flatnonzero(pool)
    if not len(left):
        return []
    # the remaining candidates' vectors and the selected nodes' in one lookup
    matrix, has_vec = _vectors(memory, [table.nodes[i] for i in [*left, *chosen]])
    matrix, has_vec, picked, picked_has = matrix[: len(left)], has_vec[: len(left)], \
        matrix[len(left) :], has_vec[len(left) :]  # fmt: skip
    best_sim = np.full(len(left), -np.inf)
    for vec in picked[picked_has]:
        best_sim = np.maximum(best_sim, matrix @ vec)
    central = 0.8 * table.values["centrality"][left]
    taken = np.zeros(len(left), dtype=bool)
    out: list[ContextItem] = []
    while len(out) < min(budget, len(left)):
        diversity = np.where(
            has_vec & np.isfinite(best_sim), np.clip(1.0 - best_sim, 0.0, 1.0), 1.0
        )
        score = np.where(taken, -np.inf, central + 0.2 * diversity)
        pick = int(np.argmax(score))  # first maximum: ties go to the smaller id (sorted)
        taken[pick] = True
        item = _tier_item(table, int(left[pick]), "background", float(score[pick]))
        item.signals["diversity"] = round(float(diversity[pick]), 6)
        out.append(item)
        if has_vec[pick]:
            best_sim = np.maximum(best_sim, matrix @ matrix[pick])
    return out


def _vectors(
    memory: TenantMemory, nodes: list[Node]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """The nodes' vectors as rows (zeros for a node without one) and which have one: one
    lookup per embedded kind, not one per node."""
    matrix = np.zeros((len(nodes), memory.dim), dtype=np.float32)
    has_vec = np.zeros(len(nodes), dtype=bool)
    by_kind: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        # the kind's name (a StrEnum, equal to its member) as a plain string: the member
        # hashes by a Python call, and a fold groups every candidate
        by_kind.setdefault(str(node.kind), []).append(i)
    for kind, rows in by_kind.items():
        index = memory.indexes.get(kind)
        if index is not None:
            found, present = index.get_many([nodes[i].id for i in rows])
            matrix[rows] = found
            has_vec[rows] = present
    return matrix, has_vec
