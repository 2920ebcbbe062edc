"""EntityIndex: an inverted index entity -> recent EVENT nodes that mention it.

A derived, non-persisted structure kept on :class:`TenantMemory` (``memory.entities``): the
engine adds each EVENT node at ingest; after a load it is rebuilt from the graph with
:func:`rebuild_entity_index`. Each entity keeps only its ``per_entity`` most recent events, so
a lookup costs O(entities of the event x per_entity), whatever the size of the graph.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from schemas.graph import Node, NodeKind
from topologies.graph import MemoryGraph, raw_attr
from topologies.node_memo import NodeMemo
from topologies.text import entity_weight, extract_entities

log = structlog.get_logger(__name__)

PER_ENTITY = 64
COMMON_AFTER = 8  # entities in more recent events than this start to link less


def node_entities(node: Node) -> list[str]:
    """Entities of an EVENT node: its text, participants and source thread id."""
    thread = raw_attr(node, "thread_id")
    text = f"{node.title}\n{node.text}" if node.text else node.title
    return extract_entities(
        text, node.participants, thread=str(thread) if thread else None, owner=node.tenant
    )


def entities_of(memory: EntityHolder, node: Node) -> list[str]:
    """``node_entities``, read once per version of the node: an event's entities are read
    when it is indexed, when it is planned and at later folds of its theme (intent bounds)."""
    return memory.node_memo.get("entities", node, node_entities)


@dataclass(frozen=True)
class EntityMatch:
    node_id: str
    ts: datetime
    score: float
    shared: tuple[str, ...]


class EntityIndex:
    """entity -> sorted list of (ts, node_id), the most recent ``per_entity`` kept."""

    def __init__(self, per_entity: int = PER_ENTITY, memo: NodeMemo | None = None) -> None:
        self.per_entity = per_entity
        self.memo = memo  # where the entities of a node version are kept (none: read each time)
        self._postings: dict[str, list[tuple[datetime, str]]] = {}
        self._nodes: set[str] = set()
        self._times: list[tuple[datetime, str]] = []  # every indexed event, by time
        self._people: set[str] | None = None  # ``people`` until an entity is first posted

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def entities(self) -> int:
        return len(self._postings)

    def postings(self, entity: str) -> list[tuple[datetime, str]]:
        return list(self._postings.get(entity, ()))

    def people(self) -> set[str]:
        """The names of the people in the indexed events (lower case, as written), and the
        first names of those written with more than one word. Read again only when an entity
        is posted for the first time: a chat turn asks for them (``reactions``) while the
        index holds thousands of entities and gains a new one now and then."""
        if self._people is None:
            self._people = self._read_people()
        return set(self._people)

    def _read_people(self) -> set[str]:
        found: set[str] = set()
        for entity in self._postings:
            kind, _, name = entity.partition(":")
            if kind == "person" and name:
                found.add(name)
                found.add(name.split(" ")[0])
        return found

    def add(self, node_id: str, ts: datetime, entities: list[str]) -> None:
        if node_id in self._nodes:
            return
        self._nodes.add(node_id)
        bisect.insort(self._times, (ts, node_id))
        for entity in entities:
            if entity not in self._postings:
                self._people = None
            bucket = self._postings.setdefault(entity, [])
            bisect.insort(bucket, (ts, node_id))
            if len(bucket) > self.per_entity:
                dropped = bucket.pop(0)
                log.debug("entity_posting_trimmed", entity=entity, node_id=dropped[1])

    def add_node(self, node: Node) -> None:
        """Index an EVENT node (once: an indexed node is not read again)."""
        if node.kind != NodeKind.EVENT or node.ts is None or node.id in self._nodes:
            return
        memo = self.memo
        if memo is None:
            entities = node_entities(node)
        else:
            entities = memo.get("entities", node, node_entities)
        self.add(node.id, node.ts, entities)

    def clear(self) -> None:
        self._people = None
        self._postings.clear()
        self._nodes.clear()
        self._times.clear()

    def count_between(self, start: datetime, end: datetime) -> int:
        """How many indexed events have a time in [start, end)."""
        lo = bisect.bisect_left(self._times, (start, ""))
        return bisect.bisect_left(self._times, (end, "")) - lo

    def latest_before(self, before: datetime, start: datetime, limit: int) -> list[str]:
        """The ids of at most ``limit`` indexed events with a time in [start, before), the
        latest first: the turns just before a chat turn (``topologies/reactions.py``)."""
        hi = bisect.bisect_left(self._times, (before, ""))
        lo = max(bisect.bisect_left(self._times, (start, "")), hi - limit)
        return [node_id for _, node_id in reversed(self._times[lo:hi])]

    def _rarity(self, postings: int) -> float:
        """1 for entities in a few events, falling to 0.5 for a saturated posting list."""
        common = COMMON_AFTER
        if postings <= common or self.per_entity <= common:
            return 1.0
        return 1.0 / (1.0 + math.log(postings / common) / math.log(self.per_entity / common))

    def related(
        self,
        entities: list[str],
        before: datetime,
        window: timedelta,
        exclude: str | None = None,
        limit: int = 16,
    ) -> list[EntityMatch]:
        """Earlier events (ts in [before - window, before)) sharing entities, strongest first.

        An entity's weight is its type weight times a rarity factor: an entity found in many
        events (a saturated posting list) links weakly.
        """
        score: dict[str, float] = {}
        shared: dict[str, list[str]] = {}
        when: dict[str, datetime] = {}
        start = before - window
        for entity in entities:
            bucket = self._postings.get(entity)
            if not bucket:
                continue
            rarity = self._rarity(len(bucket))
            weight = entity_weight(entity) * rarity
            lo = bisect.bisect_left(bucket, (start, ""))
            for ts, node_id in bucket[lo:]:
                if ts >= before or node_id == exclude:
                    continue
                score[node_id] = score.get(node_id, 0.0) + weight
                shared.setdefault(node_id, []).append(entity)
                when[node_id] = ts
        ranked = sorted(score, key=lambda nid: (-score[nid], -when[nid].timestamp(), nid))
        return [
            EntityMatch(nid, when[nid], round(score[nid], 6), tuple(shared[nid]))
            for nid in ranked[:limit]
        ]


class EntityHolder(Protocol):
    """What keeps an entity index beside its graph (:class:`TenantMemory` does); named here so
    this module needs no import of the memory that imports it."""

    tenant: str
    graph: MemoryGraph
    entities: EntityIndex
    node_memo: NodeMemo


def rebuild_entity_index(memory: EntityHolder) -> EntityIndex:
    """Rebuild ``memory.entities`` from the EVENT nodes (after a load; one pass, not per fold)."""
    index = memory.entities
    index.clear()
    events = sorted(memory.graph.nodes(NodeKind.EVENT), key=lambda n: (n.ts or datetime.min, n.id))
    for node in events:
        index.add_node(node)
    log.info("entity_index_rebuilt", tenant=memory.tenant, events=len(events),
             entities=index.entities())  # fmt: skip
    return index


def ensure_entity_index(memory: EntityHolder, current: Node | None = None) -> EntityIndex:
    """Make sure ``current`` is indexed; rebuild when the index is behind the graph (a memory
    loaded without :meth:`TenantMemory.load`). The check is O(1) per fold."""
    if current is not None:
        memory.entities.add_node(current)
    if len(memory.entities) < memory.graph.count(NodeKind.EVENT):
        return rebuild_entity_index(memory)
    return memory.entities
