"""A node's edges as the context assembly reads them, kept between folds.

Context assembly visits the same nodes fold after fold (a theme's concept, its recent events,
a busy TIME node). For each it needs a bounded scan of the incident edges (the most recently
attached ``per_kind`` of each kind and direction, at most ``scan_cap``), ranked by decayed
weight, and the outgoing ones as arrays for the PageRank matrix. Both are kept per node and
rebuilt only when one of the node's edges changes (``MemoryGraph.edge_stamp``).

The ranking does not depend on the time it is read at: ``w0 * exp(-lambda * (now - t_last))``
orders two edges as ``log(w0) + lambda * t_last`` does, whatever ``now`` (edges are not
touched after the clock), so the strongest edges of a node are computed once per change, not
once per visit. Weights themselves are computed once per fold, as arrays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies.graph import MemoryGraph

SECONDS_PER_DAY = 86400.0
EDGE_SCAN_CAP = 256  # incident edges looked at per node when picking the strongest
KIND_SCAN_CAP = 12  # ... the newest of each edge kind and direction (= max_fanout: within a
# kind, edges share a prior weight, so the newest are the least decayed)
DEADLINE_EDGE_CAP = 8  # DEADLINE_FOR sources (the oldest) whose deadlines make a node urgent
EDGE_FACTS_CAP = 100_000  # edge versions whose scan facts are kept (all forgotten past it)


# source EVENT node, its event time (seconds), the edge, the edge's t_last (microseconds)
EvidenceRow = tuple[str, float, Edge, int]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def micros(when: datetime) -> int:
    """Microseconds since the epoch, exactly: ``(now - t).total_seconds()`` is
    ``(micros(now) - micros(t)) / 1_000_000`` to the bit (both divide the same integer)."""
    return (when - (EPOCH if when.tzinfo else EPOCH.replace(tzinfo=None))) // MICROSECOND


@dataclass(frozen=True)
class NodeEdges:
    """One node's scanned edges at one edge stamp."""

    stamp: int
    key: int  # the node's integer key (EdgeCache.key)
    ranked: list[tuple[str, Edge]]  # (other end, edge), strongest first
    # outgoing edges (the PageRank rows), one column each: the target's key (EdgeCache.key,
    # exact as a float), w0 and t_last (seconds since the epoch); one array, so a fold
    # gathers its candidates' edges in one concatenation
    out: npt.NDArray[np.float64]
    # the first DEADLINE_EDGE_CAP sources of DEADLINE_FOR in-edges (oldest first): the
    # deadlines that make the node urgent besides its own (``MemoryGraph.first_sources``)
    deadline_sources: list[str]


# an edge version's facts for a scan: the edge, its rank key (strength, src, dst: strongest
# first, ties as heapq.nlargest on (weight, src, dst) broke them) and t_last in seconds
_EdgeFacts = tuple[Edge, tuple[float, str, str], float]


def _strength(w0: float, t_last: float, decay_per_day: float) -> float:
    """Log of the decayed weight of an edge of prior weight ``w0`` last touched at ``t_last``
    (seconds), up to a term shared by every edge at a given time."""
    if w0 <= 0:
        return -math.inf
    return math.log(w0) + decay_per_day * t_last / SECONDS_PER_DAY


def decayed(
    w0: npt.NDArray[np.float64], t_last: npt.NDArray[np.float64], now: datetime, decay: float
) -> npt.NDArray[np.float64]:
    """``topologies.graph.decayed_weight`` over arrays (never above ``w0``)."""
    days = np.maximum(0.0, (now.timestamp() - t_last) / SECONDS_PER_DAY)
    return np.asarray(w0 * np.exp(-decay * days))


class EdgeCache:
    """Per-node edge scans of one tenant's graph, valid while the node's edge stamp is."""

    def __init__(
        self,
        per_kind: int = KIND_SCAN_CAP,
        scan_cap: int = EDGE_SCAN_CAP,
        max_nodes: int = 200_000,
    ) -> None:
        self.per_kind = per_kind
        self.scan_cap = scan_cap
        self.max_nodes = max_nodes
        self._decay: float | None = None
        self._entries: dict[str, NodeEdges] = {}
        self._keys: dict[str, int] = {}  # node id -> integer key, for array lookups
        self._evidence: dict[
            tuple[str, EdgeKind], tuple[int, list[EvidenceRow], list[Node]]
        ] = {}  # (node, kind) -> (edge stamp, rows, their source nodes)
        # (node, limit) -> (edge stamp, times stamp, its member events, the latest first)
        self._members: dict[tuple[str, int], tuple[int, int, tuple[str, ...]]] = {}
        # id of an edge version -> its scan facts; the version itself is kept in them, so an
        # id is not reused while its facts are (see ``_facts``)
        self._edge_facts: dict[int, _EdgeFacts] = {}

    def key(self, node_id: str) -> int:
        """A small integer standing for the node id (stable while the cache is not reset)."""
        found = self._keys.get(node_id)
        if found is None:
            found = self._keys[node_id] = len(self._keys)
        return found

    def get(self, graph: MemoryGraph, node_id: str, decay_per_day: float) -> NodeEdges:
        return self.many(graph, [node_id], decay_per_day)[0]

    def many(
        self, graph: MemoryGraph, node_ids: list[str], decay_per_day: float
    ) -> list[NodeEdges]:
        """The entries of ``node_ids`` (in order), scanned again where a node's edges changed:
        one call for a fold's candidates."""
        if decay_per_day != self._decay:
            self._reset()
            self._decay = decay_per_day
        found = self._entries.get
        out: list[NodeEdges] = []
        for node_id, stamp in zip(node_ids, graph.edge_stamps(node_ids), strict=True):
            entry = found(node_id)
            if entry is None or entry.stamp != stamp:
                if len(self._keys) >= self.max_nodes:
                    self._reset()
                entry = self._entries[node_id] = self._scan(graph, node_id, stamp, decay_per_day)
            out.append(entry)
        return out

    def _reset(self) -> None:
        self._entries.clear()
        self._keys.clear()
        self._evidence.clear()
        self._members.clear()
        self._edge_facts.clear()

    def members(
        self,
        graph: MemoryGraph,
        node_id: str,
        limit: int,
        read: Callable[[], tuple[list[str], bool]],
    ) -> list[str]:
        """A concept's member events as ``read()`` lists them from its in-edges and their
        sources' times (``topics.member_events``), kept while neither changes: the node's
        edge stamp and the graph's times stamp. Consolidation asks for the members of the
        same concepts near the merge bar fold after fold, and most folds touch neither.
        ``read`` also says whether its answer may be kept (an order read from a time that
        the times stamp does not follow may not)."""
        stamps = (graph.edge_stamp(node_id), graph.times_stamp)
        found = self._members.get((node_id, limit))
        if found is not None and found[:2] == stamps:
            return list(found[2])
        members, keep = read()
        if keep:
            if len(self._members) >= self.max_nodes:
                self._members.clear()
            self._members[(node_id, limit)] = (*stamps, tuple(members))
        return members

    def evidence(
        self, graph: MemoryGraph, node_id: str, kind: EdgeKind, limit: int
    ) -> list[EvidenceRow]:
        """The EVENT nodes among the newest ``limit`` sources of ``kind`` in-edges (newest
        first), with their event time (seconds), the edge and its last touch (``micros``):
        intent emergence's evidence scan, kept while the node's edges do not change."""
        stamp = graph.edge_stamp(node_id)
        found = self._evidence.get((node_id, kind))
        if found is not None and found[0] == stamp:
            return found[1]
        if len(self._evidence) >= self.max_nodes:
            self._evidence.clear()
        # a concept gains an edge at most folds: the rows of the edges and sources that did
        # not change are kept (the same edge and node objects give the same row)
        before = (
            {row[0]: (row, source) for row, source in zip(*found[1:], strict=True)} if found else {}
        )
        rows: list[EvidenceRow] = []
        sources: list[Node] = []
        for edge in graph.recent_in_edges(node_id, kind, limit):
            node = graph.node(edge.src)
            kept = before.get(edge.src)
            if kept is not None and kept[0][2] is edge and kept[1] is node:
                rows.append(kept[0])
                sources.append(node)
            elif node.kind == NodeKind.EVENT and node.ts is not None:
                rows.append((edge.src, node.ts.timestamp(), edge, micros(edge.t_last)))
                sources.append(node)
        self._evidence[(node_id, kind)] = (stamp, rows, sources)
        return rows

    def strongest(
        self, graph: MemoryGraph, node_id: str, fanout: int, decay_per_day: float
    ) -> list[tuple[str, Edge]]:
        """The ``fanout`` strongest scanned edges: (other end, edge), strongest first."""
        return self.get(graph, node_id, decay_per_day).ranked[:fanout]

    def _scan(
        self, graph: MemoryGraph, node_id: str, stamp: int, decay_per_day: float
    ) -> NodeEdges:
        scanned = self._facts(
            itertools.islice(graph.recent_edges(node_id, self.per_kind), self.scan_cap),
            decay_per_day,
        )
        scanned.sort(key=itemgetter(1), reverse=True)  # strongest first
        ranked = [(e.dst if e.src == node_id else e.src, e) for e, _, _ in scanned]
        outgoing = self._facts(
            itertools.islice(
                graph.recent_edges(node_id, self.per_kind, incoming=False), self.scan_cap
            ),
            decay_per_day,
        )
        out = np.array(
            [[self.key(e.dst) for e, _, _ in outgoing], [e.w0 for e, _, _ in outgoing],
             [t_last for _, _, t_last in outgoing]],
            dtype=np.float64,
        ).reshape(3, len(outgoing))  # fmt: skip
        sources = graph.first_sources(node_id, EdgeKind.DEADLINE_FOR, DEADLINE_EDGE_CAP)
        return NodeEdges(stamp, self.key(node_id), ranked, out, sources)

    def _facts(self, edges: Iterable[Edge], decay_per_day: float) -> list[_EdgeFacts]:
        """The scan facts of each edge, in order: derived once per edge version. A node is
        scanned again whenever one of its edges changes (a concept at most folds), and its
        other edges, the same objects, are read as they were; ``t_last.timestamp()`` and the
        logarithm of each cost more than the rest of a scan."""
        kept = self._edge_facts
        if len(kept) >= EDGE_FACTS_CAP:
            kept.clear()
        found = kept.get
        out: list[_EdgeFacts] = []
        for edge in edges:
            facts = found(id(edge))
            if facts is None or facts[0] is not edge:
                t_last = edge.t_last.timestamp()
                strength = _strength(edge.w0, t_last, decay_per_day)
                facts = kept[id(edge)] = (edge, (strength, edge.src, edge.dst), t_last)
            out.append(facts)
        return out
