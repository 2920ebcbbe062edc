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
from datetime import datetime
from operator import is_
from typing import TYPE_CHECKING, Any, TypeVar

from schemas.graph import Node

if TYPE_CHECKING:
    from topologies.graph import MemoryGraph

T = TypeVar("T")


class NodeMemo:
    """``derive(node)`` per node and name of what is derived, valid while the node object is
    the one the graph holds."""

    def __init__(self, max_nodes: int = 200_000, max_groups: int = 20_000) -> None:
        self.max_nodes = max_nodes
        self.max_groups = max_groups
        self._kept: dict[str, tuple[Node, dict[str, Any]]] = {}
        # (what, key) -> (the group's node objects, the value derived from them)
        self._groups: dict[tuple[str, str], tuple[tuple[Node, ...], Any]] = {}
        self.words = WordsMemo()  # what events' words say, by event id
        # id of a stamp object read from a node's fields -> (the stamp, a value derived from
        # it, ``topologies.context._micros``): a node's new version (an access) holds the
        # very stamp objects of the one before, read again at once
        self.stamps: dict[int, tuple[datetime, int]] = {}

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
        costly per call (a parse of a batch of texts) is paid once. A value already derived
        is read as ``get`` reads it (a goal's events are asked about in chunks of some
        dozens, fold after fold: most answers are kept)."""
        kept_values = self._kept.get
        found: list[Any] = []
        todo: dict[int, tuple[Node, list[int]]] = {}  # node object -> its places in ``nodes``
        for place, node in enumerate(nodes):
            kept = kept_values(node.id)
            if kept is not None and kept[0] is node and what in kept[1]:
                found.append(kept[1][what])
                continue
            found.append(None)
            todo.setdefault(id(node), (node, []))[1].append(place)
        if todo:
            derived = derive([node for node, _ in todo.values()])
            for (node, places), value in zip(todo.values(), derived, strict=True):
                self._values(node)[what] = value
                for place in places:
                    found[place] = value
        return found

    def group(
        self, what: str, key: str, nodes: Sequence[Node], derive: Callable[[Sequence[Node]], T]
    ) -> T:
        """A value derived from the own fields of a group of nodes (a concept's latest
        members), kept under ``key`` while the group asked for is the same node objects in
        the same order: consolidation asks what the members of the same concepts name fold
        after fold, and a member's new version (or another member) derives it again."""
        kept = self._groups.get((what, key))
        if kept is not None and len(kept[0]) == len(nodes) and all(map(is_, kept[0], nodes)):
            found: T = kept[1]
            return found
        value = derive(nodes)
        if len(self._groups) >= self.max_groups:
            self._groups.clear()
        self._groups[(what, key)] = (tuple(nodes), value)
        return value

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
        gone = set(node_ids)
        for node_id in gone:
            self._kept.pop(node_id, None)
        if gone:  # nor does a group with a removed member keep what was derived from it
            self.stamps.clear()
            for key, (nodes, _) in list(self._groups.items()):
                if any(node.id in gone for node in nodes):
                    del self._groups[key]


class WordsMemo:
    """Answers read from the words of EVENT nodes (title, text, participants), by event id and
    name of what is read, kept while no event's words changed and none left the graph
    (``MemoryGraph.event_words_stamp``).

    ``NodeMemo`` keeps a value while the node object is the one in the graph, which an access
    replaces (its count): a goal's evidence events are asked whether they speak of its object
    at every reinforcement, thousands of them in a long stream, and checking each one's
    version cost more than the answers. These answers hold while the words do, whatever the
    version: an event asked about again is looked up by its id alone.
    """

    def __init__(self, max_answers: int = 400_000) -> None:
        self.max_answers = max_answers
        self._graph: MemoryGraph | None = None
        self._stamp = -1
        self._answers: dict[str, dict[str, Any]] = {}
        self._count = 0

    def answers(self, graph: MemoryGraph, what: str) -> dict[str, Any]:
        """The answers about ``what`` kept for events of ``graph`` (event id -> answer), empty
        after any event's words changed; the caller adds those it reads (``remember``)."""
        if graph is not self._graph or graph.event_words_stamp != self._stamp:
            self._graph, self._stamp = graph, graph.event_words_stamp
            self._answers, self._count = {}, 0
        return self._answers.setdefault(what, {})

    def remember(self, answers: dict[str, Any], event_id: str, answer: Any) -> None:
        """Keep an answer read from the words of an event (its node's kind is EVENT) in
        ``answers`` (from ``answers``); all are forgotten past ``max_answers``."""
        if event_id in answers:
            return  # read from the same words: the same answer
        if self._count >= self.max_answers:
            for kept in self._answers.values():
                kept.clear()
            self._count = 0
        answers[event_id] = answer
        self._count += 1
