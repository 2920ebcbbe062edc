"""Values derived from a node's own fields, kept while the node is the one in the graph.

Nodes are immutable values: a change replaces the node (``MemoryGraph.update_node``), so a
value derived from a node object stays right while ``graph.get(id)`` returns that same object.
The fold derives the same few things from the same nodes fold after fold (a candidate's latest
touch for recency, a belief's slots for reconcile); ``NodeMemo.get`` derives each once per node
version. Derived, never persisted; a node removed by a commit is forgotten then (a hard delete
leaves nothing derived from it behind).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from schemas.graph import Node

T = TypeVar("T")


class NodeMemo:
    """``derive(node)`` per node and name of what is derived, valid while the node object is
    the one the graph holds."""

    def __init__(self, max_nodes: int = 200_000) -> None:
        self.max_nodes = max_nodes
        self._kept: dict[str, tuple[Node, dict[str, Any]]] = {}

    def get(self, what: str, node: Node, derive: Callable[[Node], T]) -> T:
        kept = self._kept.get(node.id)
        if kept is None or kept[0] is not node:
            if len(self._kept) >= self.max_nodes:
                self._kept.clear()
            kept = self._kept[node.id] = (node, {})
        values = kept[1]
        if what not in values:
            values[what] = derive(node)
        found: T = values[what]
        return found

    def forget(self, node_ids: Iterable[str]) -> None:
        """Drop what was derived from these nodes (removed ones)."""
        for node_id in node_ids:
            self._kept.pop(node_id, None)
