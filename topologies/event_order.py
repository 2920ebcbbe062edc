"""Events newest first, with each event's place read once while it stays what it was.

Intent emergence reads a goal's dates from its events newest first (the goal's own events,
its cluster's, those speaking of its object), at every reinforcement: a goal of a long stream
has hundreds of evidence events, and most of them were ordered at the goal's previous
reinforcement. An event's place is its time (one without a time counts as the stream time
it is read at) and then its node id; the places of timed events are kept between folds and
read anew when an event leaves the graph or its time changes
(``MemoryGraph.times_stamp``). Derived, never persisted: a memory loaded from the store
orders its events as the one that folded them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from topologies.edge_cache import micros
from topologies.graph import MemoryGraph

Place = tuple[int, str]  # the event's time in microseconds since the epoch, its node id


class EventOrder:
    """The places of a graph's timed events, valid while its ``times_stamp`` is."""

    def __init__(self, max_events: int = 200_000) -> None:
        self.max_events = max_events
        self._graph: MemoryGraph | None = None
        self._stamp = -1
        self._places: dict[str, Place] = {}

    def newest(self, graph: MemoryGraph, events: Iterable[str], now: datetime) -> list[str]:
        """The ids of the events in the graph, newest first (ties by node id); an event
        without a time counts as ``now``."""
        places = self._valid(graph)
        asked = events if isinstance(events, (set, frozenset, list, tuple)) else list(events)
        try:  # each placed already: a goal's events, fold after fold (no check apart)
            return sorted(asked, key=places.__getitem__, reverse=True)
        except KeyError:
            pass  # one is not placed yet: placed below
        untimed: dict[str, Place] = {}  # placed at ``now``: read for this call only
        found = []
        for event in asked:
            if event in places or event in untimed:
                found.append(event)
            elif event in graph:
                node = graph.node(event)
                if node.ts is None:
                    untimed[event] = (micros(now), node.id)
                else:
                    places[event] = (micros(node.ts), node.id)
                found.append(event)
        if untimed:
            found.sort(key=lambda e: places.get(e) or untimed[e], reverse=True)
        else:
            found.sort(key=places.__getitem__, reverse=True)
        return found

    def __contains__(self, node_id: object) -> bool:
        """Whether a place of the node is kept."""
        return node_id in self._places

    def forget(self, node_ids: Iterable[str]) -> None:
        """Drop the places of these nodes (removed ones: a hard delete leaves nothing read
        from them behind; the order itself stays right by the stamp)."""
        for node_id in node_ids:
            self._places.pop(node_id, None)

    def _valid(self, graph: MemoryGraph) -> dict[str, Place]:
        """The kept places, forgotten when the graph or an event's time changed since."""
        stale = graph is not self._graph or graph.times_stamp != self._stamp
        if stale or len(self._places) >= self.max_events:
            self._graph, self._stamp = graph, graph.times_stamp
            self._places = {}
        return self._places
