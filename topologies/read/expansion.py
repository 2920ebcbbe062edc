"""Graph expansion: BFS up to ``max_hops`` with per-hop decay, blended with personalized
PageRank seeded by the hits, both on one bounded subgraph around the seeds.

Edges are followed in both directions with their lazily decayed weight (capped at 1), at most
``max_fanout`` per node (strongest first); EVENT nodes also reach their stream neighbours
through implicit temporal-contiguity links (see :mod:`topologies.read.timeline`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from schemas.graph import NodeKind
from topologies.config import ReadConfig
from topologies.context import personalized_pagerank
from topologies.graph import MemoryGraph, decayed_weight
from topologies.read.timeline import Timeline


@dataclass
class Expansion:
    received: dict[str, float] = field(default_factory=dict)  # BFS score from other seeds
    hops: dict[str, int] = field(default_factory=dict)
    via: dict[str, str] = field(default_factory=dict)
    pagerank: dict[str, float] = field(default_factory=dict)  # normalised to max = 1
    subgraph: int = 0


class _Neighbourhood:
    """Memoised, bounded adjacency of the subgraph being explored."""

    def __init__(
        self,
        graph: MemoryGraph,
        timeline: Timeline | None,
        config: ReadConfig,
        now: datetime,
        decay_per_day: float,
        allowed: Callable[[str], bool] | None,
    ) -> None:
        self.graph = graph
        self.timeline = timeline
        self.config = config
        self.now = now
        self.decay_per_day = decay_per_day
        self.allowed = allowed
        self.adj: dict[str, list[tuple[str, float]]] = {}
        self.nodes: set[str] = set()
        self._gap = timedelta(minutes=config.contiguity_gap_minutes)

    def add(self, node_id: str) -> bool:
        if node_id in self.nodes:
            return True
        if len(self.nodes) >= self.config.max_subgraph:
            return False
        self.nodes.add(node_id)
        return True

    def of(self, node_id: str) -> list[tuple[str, float]]:
        found = self.adj.get(node_id)
        if found is not None:
            return found
        best: dict[str, float] = {}
        for edge in self.graph.incident(node_id):
            other = edge.dst if edge.src == node_id else edge.src
            w = min(1.0, decayed_weight(edge, self.now, self.decay_per_day))
            if w > best.get(other, 0.0):
                best[other] = w
        if self.config.contiguity and self.timeline is not None:
            data = self.graph.g._node.get(node_id)
            if data is not None and data["n"].kind == NodeKind.EVENT:
                for other in self.timeline.neighbours(node_id, self._gap):
                    w = self.config.contiguity_weight
                    if w > best.get(other, 0.0):
                        best[other] = w
        allowed = self.allowed
        pairs = best.items() if allowed is None else [(o, w) for o, w in best.items() if allowed(o)]
        ranked = sorted(pairs, key=lambda item: -item[1])[: self.config.max_fanout]
        self.adj[node_id] = ranked
        return ranked


def expand(
    graph: MemoryGraph,
    timeline: Timeline | None,
    seeds: dict[str, float],
    config: ReadConfig,
    now: datetime,
    decay_per_day: float,
    allowed: Callable[[str], bool] | None = None,
    pagerank: bool = True,
) -> Expansion:
    """Seeds map node id -> score in (0, 1]. Returns what reached each node and from where;
    edges count at their weight decayed to ``now`` at the memory's ``decay_per_day``."""
    out = Expansion()
    if not seeds:
        return out
    hood = _Neighbourhood(graph, timeline, config, now, decay_per_day, allowed)
    for seed in seeds:
        hood.add(seed)
    # level-synchronous max-product relaxation, tracking the originating seed (no self-echo)
    frontier: dict[str, tuple[float, str]] = {s: (v, s) for s, v in seeds.items()}
    for hop in range(1, config.max_hops + 1):
        nxt: dict[str, tuple[float, str]] = {}
        for node_id, (value, origin) in frontier.items():
            for other, w in hood.of(node_id):
                if other == origin or not hood.add(other):
                    continue
                score = value * config.hop_decay * w
                if score > out.received.get(other, 0.0):
                    out.received[other] = score
                    out.hops[other] = hop
                    out.via[other] = origin
                if score > nxt.get(other, (0.0, ""))[0]:
                    nxt[other] = (score, origin)
        frontier = nxt
    out.subgraph = len(hood.nodes)
    if pagerank and config.pagerank_weight > 0.0 and len(hood.nodes) > 1:
        out.pagerank = _pagerank(hood, seeds, config.pagerank_alpha)
    return out


def _pagerank(
    hood: _Neighbourhood, seeds: dict[str, float], alpha: float, iterations: int = 30
) -> dict[str, float]:
    """Personalized PageRank by power iteration on the subgraph's symmetric weight matrix."""
    order = sorted(hood.nodes)  # a fixed order: the same sums, the same ranks every run
    at = {n: i for i, n in enumerate(order)}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for node_id, links in hood.adj.items():
        a = at.get(node_id)
        if a is None:
            continue
        for other, w in links:
            b = at.get(other)
            if b is not None and b != a:
                rows += [a, b]
                cols += [b, a]
                vals += [w, w]
    if not vals:
        return {}
    n = len(order)
    pers = np.zeros(n)
    for seed, value in seeds.items():
        if seed in at:
            pers[at[seed]] = value
    if pers.sum() <= 0.0:
        return {}
    pers /= pers.sum()
    # stop rule as before: L1 change below 1e-6 (context's rule is ``< size * tol``)
    rank = personalized_pagerank(
        n, rows, cols, vals, pers, alpha, tol=1e-6 / n, max_iter=iterations
    )
    # keep only the mass that arrived through edges: the teleport share (1 - alpha) * p(n)
    # of a seed is its own retrieval score again, and isolated hits must not lose to hubs
    arrived = np.maximum(0.0, rank - (1.0 - alpha) * pers)
    top = float(arrived.max())
    if top <= 0.0:
        return {}
    return {order[i]: float(arrived[i] / top) for i in np.flatnonzero(arrived > 0)}
