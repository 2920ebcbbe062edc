"""Names on the read path (multi-hop without an LLM).

- :class:`Anchors`: the names a query mentions raise the events that involve them (as a
  participant) or mention them (in the text, counted less).
- :func:`entity_hops`: the second hop. Events sharing a *rare* name with the query or with one
  of the first hits join the candidates and seed the expansion ("Becoming Nicole" in the hit
  about a recommendation leads to the turn about reading it). A name found in many events (a
  speaker of every turn) links nothing.

Names come from :func:`topologies.text.extract_entities` (capitalised names, @mentions,
participants, and ticket ids such as "FLX-142": a question about a ticket is about the events
that write it), lower-cased, with a possessive "'s" dropped so "Caroline's" is "caroline".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from schemas.graph import Node, NodeKind
from topologies.entities import EntityIndex
from topologies.graph import MemoryGraph
from topologies.memory import event_node_id
from topologies.text import extract_entities

NAME_KINDS = frozenset({"name", "person", "mention", "ticket"})  # a ticket id names its matter
_POSSESSIVE = re.compile(r"['’]s$")
MAX_CACHED = 200_000


def names_in(text: str, participants: Iterable[str] = ()) -> frozenset[str]:
    """Lower-cased names of a text and of its participants."""
    out: set[str] = set()
    for key in extract_entities(text, list(participants)):
        kind, _, value = key.partition(":")
        if kind in NAME_KINDS:
            value = _POSSESSIVE.sub("", value).strip()
            if value:
                out.add(value)
    return frozenset(out)


class Anchors:
    """The names of one query, matched against nodes: a node *involves* a name when it is
    among the participants of the event behind it (an EVENT's own, a FACT's source event's),
    and *mentions* it when it is in its text. One precompiled pattern, two searches a node."""

    def __init__(self, asked: frozenset[str], mention_weight: float) -> None:
        self.asked = asked
        self.mention_weight = mention_weight
        words = sorted((re.escape(n) for n in asked), key=len, reverse=True)
        self._pattern = re.compile(r"\b(" + "|".join(words) + r")\b", re.I) if words else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def match(self, graph: MemoryGraph, node: Node) -> tuple[float, list[str]]:
        """(share of the query's names it involves (1 each) or mentions (mention_weight each),
        the names matched)."""
        pattern = self._pattern
        if pattern is None:
            return 0.0, []

        def found(text: str) -> set[str]:
            return {m.lower() for m in pattern.findall(text)} if text else set()

        source = node
        if node.kind != NodeKind.EVENT and node.source_event_id:
            source = graph.get(event_node_id(node.tenant, node.source_event_id)) or node
        involved = found(" ; ".join(source.participants))
        mentioned = found(f"{node.title}\n{node.text}")
        if source is not node:
            mentioned |= found(f"{source.title}\n{source.text}")
        mentioned -= involved
        if not involved and not mentioned:
            return 0.0, []
        share = (len(involved) + self.mention_weight * len(mentioned)) / len(self.asked)
        return share, sorted(involved | mentioned)


class EntityCache:
    """node id -> the names of the event behind it (an EVENT's own, a FACT's source event's,
    with the fact's own text), computed on first use; :meth:`forget` drops the ids a
    ChangeSet touched."""

    def __init__(self) -> None:
        self._names: dict[str, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self._names)

    def forget(self, node_ids: Iterable[str]) -> None:
        for node_id in node_ids:
            self._names.pop(node_id, None)

    def clear(self) -> None:
        self._names.clear()

    def of(self, graph: MemoryGraph, node: Node) -> frozenset[str]:
        found = self._names.get(node.id)
        if found is not None:
            return found
        source = node
        if node.kind != NodeKind.EVENT and node.source_event_id:
            source = graph.get(event_node_id(node.tenant, node.source_event_id)) or node
        text = f"{source.title}\n{source.text}" if source.text else source.title
        found = names_in(text, source.participants)
        if source is not node:
            found = found | names_in(node.embed_text)
        if len(self._names) >= MAX_CACHED:
            self._names.clear()
        self._names[node.id] = found
        return found


class Hop(NamedTuple):
    """How the second hop reached an event."""

    strength: float  # 1 from the query's name; from a hit's, its share of the hit's strength
    name: str  # the shared name
    origin: str | None  # the hit whose name led here (None: the query's own name)


def entity_hops(
    index: EntityIndex,
    cache: EntityCache,
    graph: MemoryGraph,
    asked: frozenset[str],
    hits: Sequence[tuple[str, float]],
    max_postings: int,
    spread: bool = True,
) -> dict[str, Hop]:
    """Events sharing a name with the query (strength 1) or with one of the first hits: event
    node id -> :class:`Hop`. A name found in more than ``max_postings`` events (a speaker of
    every turn, the user's own name) links nothing.

    A hit's name tells nothing about the query, only about the hit: with ``spread`` the events
    it reaches share the hit's strength (each ``strength / n`` for ``n`` events), so a person
    with sixteen events does not weigh sixteen times the hit that names them. The event behind
    a fact hit is that hit's own evidence, not a second hop."""
    found: dict[str, Hop] = {}

    def reached(name: str) -> list[str]:
        postings = (
            index.postings(f"name:{name}")
            or index.postings(f"person:{name}")
            or index.postings(f"ticket:{name}")
        )
        if not postings or len(postings) > max_postings:
            return []
        return [node_id for _, node_id in postings]

    def keep(node_id: str, hop: Hop) -> None:
        if hop.strength > (found[node_id].strength if node_id in found else 0.0):
            found[node_id] = hop

    for name in _specific_first(asked):
        for node_id in reached(name):
            keep(node_id, Hop(1.0, name, None))
    for hit_id, strength in hits:
        node = graph.get(hit_id)
        if node is None:
            continue
        own = {hit_id, event_node_id(node.tenant, node.source_event_id or "")}
        links: dict[str, str] = {}  # event -> the hit's most specific name it shares
        for name in _specific_first(cache.of(graph, node) - asked):
            for node_id in reached(name):
                if node_id not in own:
                    links.setdefault(node_id, name)
        share = strength / len(links) if spread and links else strength
        for node_id, name in links.items():
            keep(node_id, Hop(share, name, hit_id))
    return found


def _specific_first(names: Iterable[str]) -> list[str]:
    """Longer names first ("becoming nicole" before "becoming"), then alphabetical."""
    return sorted(names, key=lambda n: (-len(n), n))
