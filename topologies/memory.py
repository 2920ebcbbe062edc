"""TenantMemory: one tenant's graph, vector indexes and bookkeeping, changed in transactions.

A transaction journals every change to the graph, the indexes and the meta map; ``commit``
returns a :class:`ChangeSet` naming exactly what changed (the store persists only that) and
``rollback`` restores the state before ``begin``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from schemas.graph import Edge, Node, NodeKind
from topologies.config import AnnConfig
from topologies.edge_cache import EdgeCache
from topologies.entities import EntityIndex, rebuild_entity_index
from topologies.event_order import EventOrder
from topologies.goals import current_cues
from topologies.graph import EdgeKey, Journal, MemoryGraph
from topologies.node_memo import NodeMemo
from topologies.vector_index import Vector, VectorIndex

EMBEDDED_KINDS = (NodeKind.EVENT, NodeKind.FACT, NodeKind.CONCEPT, NodeKind.INTENT)
POOL = "POOL"  # index of EVENT nodes not yet grounding any concept (their topic vectors)
TOPIC = "TOPIC"  # concept centroids in topic space (topologies/topics.py)


def stable_id(prefix: str, *parts: str, size: int = 10) -> str:
    """A short id derived from its parts: replaying the same input yields the same id."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=size).hexdigest()
    return f"{prefix}_{digest}"


def event_node_id(tenant: str, event_id: str) -> str:
    return stable_id("ev", tenant, event_id)


@dataclass
class ChangeSet:
    """What one committed transaction changed. Absent means deleted."""

    tenant: str
    nodes: dict[str, Node | None] = field(default_factory=dict)
    edges: dict[EdgeKey, Edge | None] = field(default_factory=dict)
    vectors: dict[tuple[str, str], Vector | None] = field(default_factory=dict)  # (index, id)
    aliases: dict[str, str | None] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # value None = deleted
    events: dict[str, str | None] = field(default_factory=dict)  # event id -> state

    @property
    def empty(self) -> bool:
        return not (
            self.nodes or self.edges or self.vectors or self.aliases or self.meta or self.events
        )


def merge_changes(changes: Sequence[ChangeSet]) -> list[ChangeSet]:
    """Consecutive ChangeSets as one per tenant, in order of first appearance: each key's
    final value (what writing them one after the other leaves), written once."""
    merged: dict[str, ChangeSet] = {}
    for change in changes:
        into = merged.setdefault(change.tenant, ChangeSet(tenant=change.tenant))
        into.nodes.update(change.nodes)
        into.edges.update(change.edges)
        into.vectors.update(change.vectors)
        into.aliases.update(change.aliases)
        into.meta.update(change.meta)
        into.events.update(change.events)
    return [c for c in merged.values() if not c.empty]


@dataclass
class _Tx:
    undo: list[Callable[[], None]] = field(default_factory=list)
    vectors: set[tuple[str, str]] = field(default_factory=set)
    meta: set[str] = field(default_factory=set)
    events: set[str] = field(default_factory=set)


class TenantMemory:
    """Everything the engine holds for one tenant."""

    def __init__(self, tenant: str, dim: int, ann: AnnConfig | None = None) -> None:
        self.tenant = tenant
        self.dim = dim
        self.graph = MemoryGraph(tenant)
        self.indexes: dict[str, VectorIndex] = {
            name: VectorIndex(dim, ann)
            for name in (*(k.value for k in EMBEDDED_KINDS), POOL, TOPIC)
        }
        self.meta: dict[str, Any] = {}
        self.event_states: dict[str, str] = {}  # RawEvent id -> "stored" | "folded"
        self.node_memo = NodeMemo()  # derived: values computed from a node's own fields
        # derived, not persisted: rebuilt by load()
        self.entities = EntityIndex(memo=self.node_memo)
        self.edge_cache = EdgeCache()  # derived: nodes' edge scans, kept per edge stamp
        self.event_order = EventOrder()  # derived: events' places by time, per times stamp
        self._tx: _Tx | None = None

    # ------------------------------------------------------------------ lookups
    def index(self, kind: NodeKind | str) -> VectorIndex:
        return self.indexes[str(kind)]

    def vector(self, node_id: str) -> Vector | None:
        node = self.graph.get(node_id)
        if node is None or node.kind.value not in self.indexes:
            return None
        return self.indexes[node.kind.value].get(node.id)

    def event_state(self, event_id: str) -> str | None:
        return self.event_states.get(event_id)

    def pending_events(self) -> list[str]:
        return [eid for eid, state in self.event_states.items() if state == "stored"]

    # ------------------------------------------------------------- transactions
    @property
    def in_transaction(self) -> bool:
        return self._tx is not None

    def begin(self) -> None:
        self.graph.begin()
        self._tx = _Tx()
        for name, index in self.indexes.items():
            index.attach(self._vector_recorder(name))

    def commit(self) -> ChangeSet:
        changes = ChangeSet(tenant=self.tenant)
        self._commit_into(changes)
        return changes

    def rollback(self) -> None:
        tx = self._close()
        for step in reversed(tx.undo):
            step()
        self.graph.rollback()

    @contextmanager
    def transaction(self) -> Iterator[ChangeSet]:
        """The one way a writer changes memory: ``with memory.transaction() as changes: ...``.

        Yields the transaction's ChangeSet: empty inside the block, filled with exactly what
        changed when the block ends without an exception (the commit). Any exception rolls
        every change back and is re-raised; the ChangeSet then stays empty.
        """
        changes = ChangeSet(tenant=self.tenant)
        self.begin()
        try:
            yield changes
        except BaseException:
            self.rollback()
            raise
        self._commit_into(changes)

    def _close(self) -> _Tx:
        if self._tx is None:
            raise RuntimeError("no open transaction")
        tx, self._tx = self._tx, None
        for index in self.indexes.values():
            index.attach(None)
        return tx

    def _vector_recorder(self, name: str) -> Callable[[Callable[[], None], str], None]:
        def record(undo: Callable[[], None], node_id: str) -> None:
            assert self._tx is not None
            self._tx.undo.append(undo)
            self._tx.vectors.add((name, node_id))

        return record

    # ------------------------------------------------------------------ writing
    def set_meta(self, key: str, value: Any) -> None:
        previous = self.meta.get(key, _MISSING)
        if value is None:
            self.meta.pop(key, None)
        else:
            self.meta[key] = value
        if self._tx is not None:
            self._tx.meta.add(key)
            if previous is _MISSING:
                self._tx.undo.append(lambda: self._drop_meta(key))
            else:
                self._tx.undo.append(lambda: self.meta.__setitem__(key, previous))

    def _drop_meta(self, key: str) -> None:
        self.meta.pop(key, None)

    def _drop_event_state(self, event_id: str) -> None:
        self.event_states.pop(event_id, None)

    def set_event_state(self, event_id: str, state: str | None) -> None:
        previous = self.event_states.get(event_id)
        if state is None:
            self.event_states.pop(event_id, None)
        else:
            self.event_states[event_id] = state
        if self._tx is not None:
            self._tx.events.add(event_id)
            if previous is None:
                self._tx.undo.append(lambda: self._drop_event_state(event_id))
            else:
                self._tx.undo.append(lambda: self.event_states.__setitem__(event_id, previous))

    def _commit_into(self, change: ChangeSet) -> None:
        tx = self._close()
        journal = self.graph.commit()
        self._fill(change, journal, tx)

    def _fill(self, change: ChangeSet, journal: Journal, tx: _Tx) -> None:
        for node_id in journal.nodes:
            data = self.graph.g.nodes.get(node_id)
            change.nodes[node_id] = None if data is None else data["n"]
        removed = [n for n, node in change.nodes.items() if node is None]
        self.node_memo.forget(removed)
        self.event_order.forget(removed)
        for key in journal.edges:
            change.edges[key] = self.graph.edge(*key)
        for absorbed in journal.aliases:
            change.aliases[absorbed] = self.graph.aliases.get(absorbed)
        for name, node_id in tx.vectors:
            change.vectors[(name, node_id)] = self.indexes[name].get(node_id)
        for meta_key in tx.meta:
            change.meta[meta_key] = self.meta.get(meta_key)
        for event_id in tx.events:
            change.events[event_id] = self.event_states.get(event_id)

    # ------------------------------------------------------------------ loading
    def load(
        self,
        nodes: list[Node],
        edges: list[Edge],
        aliases: dict[str, str],
        vectors: list[tuple[str, str, Vector]],
        meta: dict[str, Any],
        events: dict[str, str],
    ) -> None:
        """Bulk load a stored state (no journal). Goal cues stored by older rules are read
        again (``goals.current_cues``)."""
        self.graph.load([current_cues(node) for node in nodes], edges, aliases)
        for name, node_id, vec in vectors:
            if name in self.indexes:
                self.indexes[name].load(node_id, vec)
        for index in self.indexes.values():
            index.finish_load()
        self.meta.update(meta)
        self.event_states.update(events)
        rebuild_entity_index(self)


_MISSING: Any = object()
