"""Events in stream order, for temporal-contiguity links (the contiguity effect of free recall).

Two EVENT nodes of the same source that are adjacent in event time, at most ``gap`` apart, are
implicitly linked: the read path expands across these links as it does across graph edges.
Kept incrementally, like the lexical index.
"""

from __future__ import annotations

import bisect
from datetime import datetime, timedelta

from schemas.graph import Node, NodeKind
from topologies.memory import ChangeSet, TenantMemory

_Key = tuple[datetime, str]


class Timeline:
    """EVENT nodes in (time, id) order, one sorted list per source: the neighbours of an event
    are the entries beside it in its source's list."""

    def __init__(self) -> None:
        self._by_source: dict[str, list[_Key]] = {}
        self._key: dict[str, _Key] = {}
        self._source: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._key)

    def build(self, memory: TenantMemory) -> None:
        self._by_source.clear()
        self._key.clear()
        self._source.clear()
        for node in memory.graph.nodes(NodeKind.EVENT):
            if node.ts is not None:
                key = (node.ts, node.id)
                source = node.source or ""
                self._key[node.id] = key
                self._source[node.id] = source
                self._by_source.setdefault(source, []).append(key)
        for order in self._by_source.values():
            order.sort()

    def apply(self, changes: ChangeSet) -> None:
        for node_id, node in changes.nodes.items():
            if node is None or node.kind != NodeKind.EVENT:
                self._remove(node_id)
            elif node_id not in self._key:
                self._add(node)

    def sync(self, memory: TenantMemory) -> None:
        present = memory.graph.ids(NodeKind.EVENT)
        for node_id in set(self._key) - present:
            self._remove(node_id)
        for node_id in present - set(self._key):
            self._add(memory.graph.node(node_id))

    def _add(self, node: Node) -> None:
        if node.ts is None:
            return
        key = (node.ts, node.id)
        source = node.source or ""
        self._key[node.id] = key
        self._source[node.id] = source
        bisect.insort(self._by_source.setdefault(source, []), key)

    def _remove(self, node_id: str) -> None:
        key = self._key.pop(node_id, None)
        if key is None:
            return
        order = self._by_source.get(self._source.pop(node_id, ""), [])
        at = bisect.bisect_left(order, key)
        if at < len(order) and order[at] == key:
            del order[at]

    def neighbours(self, node_id: str, gap: timedelta) -> list[str]:
        """The previous and next event of the same source, if within ``gap``."""
        key = self._key.get(node_id)
        if key is None:
            return []
        order = self._by_source[self._source[node_id]]
        at = bisect.bisect_left(order, key)
        found: list[str] = []
        if at > 0 and key[0] - order[at - 1][0] <= gap:
            found.append(order[at - 1][1])
        if at + 1 < len(order) and order[at + 1][0] - key[0] <= gap:
            found.append(order[at + 1][1])
        return found
