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
    def __init__(self) -> None:
        self._order: list[_Key] = []
        self._key: dict[str, _Key] = {}
        self._source: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._key)

    def build(self, memory: TenantMemory) -> None:
        self._order.clear()
        self._key.clear()
        self._source.clear()
        for node in memory.graph.nodes(NodeKind.EVENT):
            if node.ts is not None:
                key = (node.ts, node.id)
                self._key[node.id] = key
                self._source[node.id] = node.source or ""
                self._order.append(key)
        self._order.sort()

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
        self._key[node.id] = key
        self._source[node.id] = node.source or ""
        bisect.insort(self._order, key)

    def _remove(self, node_id: str) -> None:
        key = self._key.pop(node_id, None)
        if key is None:
            return
        self._source.pop(node_id, None)
        at = bisect.bisect_left(self._order, key)
        if at < len(self._order) and self._order[at] == key:
            del self._order[at]

    def neighbours(self, node_id: str, gap: timedelta) -> list[str]:
        """The previous and next event of the same source, if within ``gap``."""
        key = self._key.get(node_id)
        if key is None:
            return []
        source = self._source[node_id]
        at = bisect.bisect_left(self._order, key)
        found: list[str] = []
        for step in (-1, 1):
            pos = at + step
            while 0 <= pos < len(self._order):
                ts, other = self._order[pos]
                if abs(ts - key[0]) > gap:
                    break
                if self._source.get(other) == source:
                    found.append(other)
                    break
                pos += step
        return found
