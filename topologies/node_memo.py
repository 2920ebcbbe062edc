"""Values derived from a node's own fields, kept while the node is the one in the graph.

Nodes are immutable values: a change replaces the node (``MemoryGraph.update_node``), so a
value derived from a node object stays right while ``graph.get(id)`` returns that same object.
The fold derives the same few things from the same nodes fold after fold (a candidate's latest
touch for recency, a belief's slots for reconcile); ``NodeMemo.get`` derives each once per node
version. Derived, never persisted; a node removed by a commit is forgotten then (a hard delete
leaves nothing derived from it behind).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
        # the hot path (a fold reads a few hundred thousand values): this version's value
        # already derived, read without a further call
        if kept is not None and kept[0] is node and what in kept[1]:
            found: T = kept[1][what]
            return found
        values = self._values(node)
        values[what] = derived = derive(node)
        return derived

    def many(
        self, what: str, nodes: Sequence[Node], derive: Callable[[list[Node]], list[T]]
    ) -> list[T]:
        """``get`` for several nodes, in order: the nodes without the value are derived in one
        call (``derive`` answers one value per node it is given, in order), so what is
        costly per call (a parse of a batch of texts) is paid once."""
        kept = [self._values(node) for node in nodes]
        todo: dict[int, tuple[Node, list[dict[str, Any]]]] = {}
        for node, values in zip(nodes, kept, strict=True):
            if what not in values:
                todo.setdefault(id(node), (node, []))[1].append(values)
        if todo:
            derived = derive([node for node, _ in todo.values()])
            for (_, holders), value in zip(todo.values(), derived, strict=True):
                for values in holders:
                    values[what] = value
        return [values[what] for values in kept]

    def _values(self, node: Node) -> dict[str, Any]:
        """What is derived from this version of the node (empty for a new version)."""
        kept = self._kept.get(node.id)
        if kept is None or kept[0] is not node:
            if len(self._kept) >= self.max_nodes:
                self._kept.clear()
            kept = self._kept[node.id] = (node, {})
        return kept[1]

    def forget(self, node_ids: Iterable[str]) -> None:
        """Drop what was derived from these nodes (removed ones)."""
        for node_id in node_ids:
            self._kept.pop(node_id, None)
