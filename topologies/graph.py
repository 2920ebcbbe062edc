"""The per-tenant typed multigraph, with an undo journal for snapshot/rollback.

Storage is a networkx MultiDiGraph keyed by edge kind: node attribute ``n`` holds the
:class:`schemas.Node`, edge attribute ``e`` the :class:`schemas.Edge`. Nodes and edges are
treated as immutable values: every change replaces the object (``model_copy``), which lets
the journal keep the previous object as the snapshot of exactly what a fold touched. A
rollback restores those objects; nothing is copied for the untouched rest of the graph, so
a fold costs what it touches, not what the graph holds.

Never mutate a Node or Edge in place: use the methods below.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import networkx as nx

from schemas.errors import NotFoundError
from schemas.graph import Edge, EdgeKind, Node, NodeKind

EdgeKey = tuple[str, str, EdgeKind]


def raw_attr(node: Node, name: str) -> object | None:
    """An EVENT node's attribute as its source sent it (the engine keeps the RawEvent's
    ``attrs`` under ``attrs["raw_attrs"]``: a sender, a thread id, a calendar entry's start);
    None when absent."""
    raw = node.attrs.get("raw_attrs")
    return raw.get(name) if isinstance(raw, dict) else None


@dataclass
class Journal:
    """Undo steps and dirty keys of one open transaction."""

    undo: list[Callable[[], None]] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)
    edges: set[EdgeKey] = field(default_factory=set)
    aliases: set[str] = field(default_factory=set)


class MemoryGraph:
    """Nodes, typed edges and the alias map (absorbed id -> surviving id) of one tenant."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.g: nx.MultiDiGraph = nx.MultiDiGraph()
        self.aliases: dict[str, str] = {}
        self._by_kind: dict[NodeKind, set[str]] = {kind: set() for kind in NodeKind}
        # (node, edge kind) -> neighbour ids, both directions: kind-filtered edge lookups cost
        # what they return, not the node's whole degree (hubs have thousands of REINFORCES)
        self._out_kind: dict[tuple[str, EdgeKind], dict[str, None]] = {}
        self._in_kind: dict[tuple[str, EdgeKind], dict[str, None]] = {}
        # node -> stamp of the latest change to its incident edges: caches of a node's edges
        # (topologies/edge_cache.py) stay valid while its stamp does
        self._edge_stamps: dict[str, int] = {}
        self._stamp = 0
        self._times_stamp = 0  # see ``times_stamp``
        self._event_words_stamp = 0  # see ``event_words_stamp``
        self._journal: Journal | None = None

    # ----------------------------------------------------------------- reading
    def __contains__(self, node_id: object) -> bool:
        return node_id in self.g

    def __len__(self) -> int:
        return int(self.g.number_of_nodes())

    def resolve(self, node_id: str) -> str:
        """Follow merge aliases so ids of absorbed nodes keep resolving."""
        seen = 0
        while node_id not in self.g and node_id in self.aliases and seen < 64:
            node_id = self.aliases[node_id]
            seen += 1
        return node_id

    def get(self, node_id: str) -> Node | None:
        data = self.g._node.get(node_id)  # networkx's node dict: the hottest lookup of a fold
        if data is None and node_id in self.aliases:
            data = self.g._node.get(self.resolve(node_id))
        return None if data is None else data["n"]

    def node(self, node_id: str) -> Node:
        found = self.get(node_id)
        if found is None:
            raise NotFoundError(f"node {node_id!r} not found in tenant {self.tenant!r}")
        return found

    def nodes_of(self, node_ids: Iterable[str]) -> list[Node]:
        """``node`` of each id, in order: one call for a list read fold after fold (a
        concept's members)."""
        found = self.g._node.get
        return [data["n"] if (data := found(i)) is not None else self.node(i) for i in node_ids]

    def present(self, node_ids: Iterable[str]) -> set[str]:
        """The ids that are nodes of the graph (an absorbed id's alias is not)."""
        return set(filter(self.g._node.__contains__, node_ids))

    def nodes(self, kind: NodeKind | None = None) -> Iterator[Node]:
        if kind is None:
            for _, data in self.g.nodes(data=True):
                yield data["n"]
        else:
            for node_id in self._by_kind[kind]:
                yield self.g.nodes[node_id]["n"]

    def ids(self, kind: NodeKind) -> set[str]:
        return self._by_kind[kind]

    def count(self, kind: NodeKind | None = None) -> int:
        return len(self) if kind is None else len(self._by_kind[kind])

    def edge(self, src: str, dst: str, kind: EdgeKind) -> Edge | None:
        data = self.g.get_edge_data(src, dst, key=kind)
        return None if data is None else data["e"]

    def edges(self, kind: EdgeKind | None = None) -> Iterator[Edge]:
        for _, _, key, data in self.g.edges(keys=True, data=True):
            if kind is None or key == kind:
                yield data["e"]

    def out_edges(self, node_id: str, kind: EdgeKind | None = None) -> Iterator[Edge]:
        if node_id not in self.g:
            return
        if kind is not None:
            succ = self.g._succ[node_id]
            for dst in list(self._out_kind.get((node_id, kind), ())):
                yield succ[dst][kind]["e"]
            return
        # networkx's own adjacency dicts (``_succ``/``_pred``): its public views wrap every
        # level in a Mapping proxy, which cost more than the rest of the context assembly
        for keyed in self.g._succ[node_id].values():
            for data in keyed.values():
                yield data["e"]

    def in_edges(self, node_id: str, kind: EdgeKind | None = None) -> Iterator[Edge]:
        if node_id not in self.g:
            return
        if kind is not None:
            pred = self.g._pred[node_id]
            for src in list(self._in_kind.get((node_id, kind), ())):
                yield pred[src][kind]["e"]
            return
        for keyed in self.g._pred[node_id].values():
            for data in keyed.values():
                yield data["e"]

    def recent_sources(self, node_id: str, kind: EdgeKind, limit: int) -> list[str]:
        """Sources of ``kind`` in-edges, the newest (by creation time) first, at most ``limit``:
        costs what it returns, whatever the node's degree."""
        return list(itertools.islice(reversed(self._in_kind.get((node_id, kind), {})), limit))

    def recent_in_edges(self, node_id: str, kind: EdgeKind, limit: int) -> list[Edge]:
        """The ``kind`` in-edges of ``recent_sources``, in its order (newest first)."""
        if node_id not in self.g:
            return []
        pred = self.g._pred[node_id]
        return [pred[src][kind]["e"] for src in self.recent_sources(node_id, kind, limit)]

    def first_sources(self, node_id: str, kind: EdgeKind, limit: int) -> list[str]:
        """Sources of ``kind`` in-edges, the oldest first, at most ``limit`` (bounded cost)."""
        return list(itertools.islice(self._in_kind.get((node_id, kind), ()), limit))

    def recent_targets(self, node_id: str, kind: EdgeKind, limit: int) -> list[str]:
        """Targets of ``kind`` out-edges, the newest first, at most ``limit``."""
        return list(itertools.islice(reversed(self._out_kind.get((node_id, kind), {})), limit))

    def recent_edges(self, node_id: str, per_kind: int, incoming: bool = True) -> Iterator[Edge]:
        """Out-edges (and in-edges unless ``incoming`` is False) of every kind, the most recently
        attached ``per_kind`` of each kind and direction: what a hub's newest (least decayed)
        edges are, at a cost bounded by ``per_kind``, whatever the node's degree."""
        if node_id not in self.g:
            return
        succ, pred = self.g._succ[node_id], self.g._pred[node_id]
        if len(succ) + (len(pred) if incoming else 0) <= per_kind:  # small: every edge is new
            yield from self.out_edges(node_id)
            if incoming:
                yield from self.in_edges(node_id)
            return
        for kind in EdgeKind:
            for dst in itertools.islice(
                reversed(self._out_kind.get((node_id, kind), {})), per_kind
            ):
                yield succ[dst][kind]["e"]
            if incoming:
                for src in itertools.islice(
                    reversed(self._in_kind.get((node_id, kind), {})), per_kind
                ):
                    yield pred[src][kind]["e"]

    def edge_stamp(self, node_id: str) -> int:
        """Changes whenever an edge of the node is put, replaced or removed (rollbacks too)."""
        return self._edge_stamps.get(node_id, 0)

    @property
    def edges_stamp(self) -> int:
        """Changes whenever any edge of the graph is put, replaced or removed (rollbacks too):
        what was read from its edges stays right while it does not."""
        return self._stamp

    @property
    def times_stamp(self) -> int:
        """Changes whenever a node leaves the graph or its time (``ts``) changes (rollbacks
        too): an order of nodes by their time, read from the graph, stays right while it does
        not (a new node does not change it: it has no place in an order read before it came)."""
        return self._times_stamp

    @property
    def event_words_stamp(self) -> int:
        """Changes whenever an EVENT node leaves the graph or its words (title, text,
        participants) change (rollbacks too): what was read from the words of events, by
        their ids, stays right while it does not (a new event does not change it; nor does
        an access, which only counts)."""
        return self._event_words_stamp

    def edge_stamps(self, node_ids: Iterable[str]) -> list[int]:
        """``edge_stamp`` of each node, in order."""
        stamps = self._edge_stamps.get
        return [stamps(node_id, 0) for node_id in node_ids]

    def _touch_edges(self, src: str, dst: str) -> None:
        self._stamp += 1
        self._edge_stamps[src] = self._edge_stamps[dst] = self._stamp

    def in_degree(self, node_id: str, kind: EdgeKind) -> int:
        return len(self._in_kind.get((node_id, kind), ()))

    def incident(self, node_id: str) -> Iterator[Edge]:
        yield from self.out_edges(node_id)
        yield from self.in_edges(node_id)

    def neighbors(self, node_id: str) -> set[str]:
        if node_id not in self.g:
            return set()
        return set(self.g.successors(node_id)) | set(self.g.predecessors(node_id))

    def adjacent(self, a: str, b: str) -> bool:
        """An edge of any kind joins a and b, in either direction."""
        return b in self.g._succ.get(a, ()) or b in self.g._pred.get(a, ())

    def has_neighbor_in(self, node_id: str, among: set[str]) -> bool:
        """Some neighbour (any edge kind, either direction, not the node itself) is in
        ``among``; out-edges first, and it stops at the first one found: a concept with
        thousands of member events answers from its few concept links."""
        if node_id not in self.g:
            return False
        for adjacency in (self.g._succ[node_id], self.g._pred[node_id]):
            if any(other in among and other != node_id for other in adjacency):
                return True
        return False

    def degree(self, node_id: str) -> int:
        return int(self.g.degree(node_id)) if node_id in self.g else 0

    def edge_count(self, kind: EdgeKind | None = None) -> int:
        if kind is None:
            return int(self.g.number_of_edges())
        return sum(1 for _ in self.edges(kind))

    # ------------------------------------------------------------ transactions
    @property
    def in_transaction(self) -> bool:
        return self._journal is not None

    def begin(self) -> Journal:
        if self._journal is not None:
            raise RuntimeError("a transaction is already open on this graph")
        self._journal = Journal()
        return self._journal

    def commit(self) -> Journal:
        journal = self._require_journal()
        self._journal = None
        return journal

    def rollback(self) -> Journal:
        journal = self._require_journal()
        self._journal = None
        for step in reversed(journal.undo):
            step()
        return journal

    def _require_journal(self) -> Journal:
        if self._journal is None:
            raise RuntimeError("no open transaction")
        return self._journal

    def _record(self, undo: Callable[[], None]) -> None:
        if self._journal is not None:
            self._journal.undo.append(undo)

    def _dirty_node(self, node_id: str) -> None:
        if self._journal is not None:
            self._journal.nodes.add(node_id)

    def _dirty_edge(self, key: EdgeKey) -> None:
        if self._journal is not None:
            self._journal.edges.add(key)

    # ---------------------------------------------------------------- writing
    def add_node(self, node: Node) -> Node:
        if node.id in self.g:
            raise ValueError(f"node {node.id!r} already exists")
        self._put_node(node)
        self._record(lambda: self._drop_node_raw(node.id))
        self._dirty_node(node.id)
        return node

    def replace_node(self, node: Node) -> Node:
        """Store a new version of an existing node (same id and kind)."""
        previous = self.node(node.id)
        if previous.kind != node.kind:
            raise ValueError("a node cannot change kind")
        self._set_node(node, previous)
        self._record(lambda: self._set_node(previous, node))
        self._dirty_node(node.id)
        return node

    def update_node(self, node_id: str, **changes: Any) -> Node:
        current = self.node(node_id)
        return self.replace_node(current.model_copy(update=changes))

    def remove_node(self, node_id: str) -> Node:
        node = self.node(node_id)
        for edge in list(self.incident(node.id)):
            self.remove_edge(edge.src, edge.dst, edge.kind)
        self._drop_node_raw(node.id)
        self._record(lambda: self._put_node(node))
        self._dirty_node(node.id)
        return node

    def put_edge(self, edge: Edge) -> Edge:
        """Insert or replace the edge (src, dst, kind)."""
        if edge.src not in self.g or edge.dst not in self.g:
            raise NotFoundError(f"edge endpoint missing: {edge.src!r} -> {edge.dst!r}")
        previous = self.edge(edge.src, edge.dst, edge.kind)
        self._put_edge_raw(edge)
        if previous is None:
            self._record(lambda: self._drop_edge_raw(edge.src, edge.dst, edge.kind))
        else:
            self._record(lambda: self._put_edge_raw(previous))
        self._dirty_edge(edge.key)
        return edge

    def remove_edge(self, src: str, dst: str, kind: EdgeKind) -> Edge | None:
        previous = self.edge(src, dst, kind)
        if previous is None:
            return None
        self._drop_edge_raw(src, dst, kind)
        self._record(lambda: self._put_edge_raw(previous))
        self._dirty_edge(previous.key)
        return previous

    def set_alias(self, absorbed: str, keeper: str) -> None:
        previous = self.aliases.get(absorbed)
        self.aliases[absorbed] = keeper
        if previous is None:
            self._record(lambda: self._drop_alias(absorbed))
        else:
            self._record(lambda: self.aliases.__setitem__(absorbed, previous))
        if self._journal is not None:
            self._journal.aliases.add(absorbed)

    def remove_alias(self, absorbed: str) -> None:
        """Drop an alias (privacy deletes: an absorbed id must not resolve to deleted data)."""
        previous = self.aliases.pop(absorbed, None)
        if previous is None:
            return
        self._record(lambda: self.aliases.__setitem__(absorbed, previous))
        if self._journal is not None:
            self._journal.aliases.add(absorbed)

    # ------------------------------------------------------------- raw access
    def _drop_alias(self, absorbed: str) -> None:
        self.aliases.pop(absorbed, None)

    def _put_edge_raw(self, edge: Edge) -> None:
        previous = self.edge(edge.src, edge.dst, edge.kind)
        if previous is not None and previous.created_at != edge.created_at:
            self._unindex_edge(edge.src, edge.dst, edge.kind)  # re-placed below by its time
        self.g.add_edge(edge.src, edge.dst, key=edge.kind, e=edge)
        self._touch_edges(edge.src, edge.dst)
        succ, pred = self.g._succ, self.g._pred
        _place(
            self._out_kind.setdefault((edge.src, edge.kind), {}),
            edge.dst,
            lambda dst: (succ[edge.src][dst][edge.kind]["e"].created_at, dst),
        )
        _place(
            self._in_kind.setdefault((edge.dst, edge.kind), {}),
            edge.src,
            lambda src: (pred[edge.dst][src][edge.kind]["e"].created_at, src),
        )

    def _drop_edge_raw(self, src: str, dst: str, kind: EdgeKind) -> None:
        self.g.remove_edge(src, dst, key=kind)
        self._unindex_edge(src, dst, kind)

    def _unindex_edge(self, src: str, dst: str, kind: EdgeKind) -> None:
        self._touch_edges(src, dst)
        out = self._out_kind.get((src, kind))
        if out is not None:
            out.pop(dst, None)
            if not out:
                del self._out_kind[(src, kind)]
        inc = self._in_kind.get((dst, kind))
        if inc is not None:
            inc.pop(src, None)
            if not inc:
                del self._in_kind[(dst, kind)]

    def _set_node(self, node: Node, previous: Node) -> None:
        """Put a version of a node in place of ``previous`` (same id)."""
        self.g.nodes[node.id]["n"] = node
        if node.ts != previous.ts:
            self._times_stamp += 1
        if node.kind == NodeKind.EVENT and (
            node.title != previous.title
            or node.text != previous.text
            or node.participants != previous.participants
        ):
            self._event_words_stamp += 1

    def _put_node(self, node: Node) -> None:
        self.g.add_node(node.id, n=node)
        self._by_kind[node.kind].add(node.id)

    def _drop_node_raw(self, node_id: str) -> None:
        node = self.g.nodes[node_id]["n"]
        self._times_stamp += 1
        if node.kind == NodeKind.EVENT:
            self._event_words_stamp += 1
        for src, dst, key in [
            *self.g.in_edges(node_id, keys=True),
            *self.g.out_edges(node_id, keys=True),
        ]:
            self._unindex_edge(src, dst, key)
        self.g.remove_node(node_id)
        self._by_kind[node.kind].discard(node_id)

    def load(self, nodes: Iterable[Node], edges: Iterable[Edge], aliases: dict[str, str]) -> None:
        """Bulk load from a store (no journal)."""
        self._event_words_stamp += 1  # a node loaded over one in place has other words
        for node in nodes:
            self._put_node(node)
        ordered = sorted(edges, key=lambda e: (e.created_at, e.src, e.dst, e.kind.value))
        for edge in ordered:  # creation order: no neighbour map needs re-placing
            if edge.src in self.g and edge.dst in self.g:
                self._put_edge_raw(edge)
        self.aliases.update(aliases)


def _place(
    entries: dict[str, None], other: str, rank: Callable[[str], tuple[datetime, str]]
) -> None:
    """Keep a (node, kind) neighbour map in edge-creation order, ties by neighbour id, however
    the edges arrive (a fold, a merge moving old edges, a rollback, a store loading them in its
    own order): "the most recent edges" then mean the same after a restart as before it. An
    edge created now goes to the end at once; an older one moves the newer tail (rare: merges,
    rollbacks)."""
    if other in entries:
        return
    mine = rank(other)
    tail: list[str] = []
    while entries and rank(next(reversed(entries))) > mine:
        tail.append(entries.popitem()[0])
    entries[other] = None
    for moved in reversed(tail):
        entries[moved] = None


def decayed_weight(edge: Edge, now: datetime, decay_per_day: float) -> float:
    """w(t) = w0 * exp(-lambda * (t - t_last)), lambda per day; never above w0."""
    days = max(0.0, (now - edge.t_last).total_seconds() / 86400.0)
    return edge.w0 * math.exp(-decay_per_day * days)
