"""A correspondent's name as evidence of a message's theme, weighed by what the person writes of.

A direct message is headed by its correspondent's name ("Jonas Weber": the chat app's heading
says who the conversation is with, not what it is about), and a short message's embedding is
mostly that name: the message lands beside the person's other messages whatever it says. For a
colleague who writes about one thing that is right (a message about his parental leave belongs
with the note "Covering while Joost is out"); for a partner whose messages already sit in three
or four concepts it is noise: the flight booking, the plumber and the cinema evening end up in
one folder because they are all with him (``docs/boundaries.md``).

So the name counts in proportion to how few themes the person's messages already span: the
topic vector of a message headed by a participant's name is formed from
``weight * embed(heading + body) + (1 - weight) * embed(body)`` with ``weight = 1 / themes``,
where ``themes`` is the number of live concepts the person's earlier events (the events they
take part in: ``person:`` entities of the entity index) are members of. The name keeps its
whole pull, as before, while the record is young (fewer than ``name_record_min`` of those
events are in a concept), and when the person takes part in more than ``name_share_max`` of
the stream since the first of them (by default never: each speaker of a conversation that is
the whole memory, as in LoCoMo, is weighed as anyone; their name's whole pull gathered their
short turns into one folder per speaker). Everything is read from the memory as it stands
when the message is stored, before it is folded, so a replay folds the same vectors; the
topic vector is kept in the POOL index with the event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.config import TopicConfig
from topologies.entities import EntityHolder, ensure_entity_index
from topologies.text import extract_entities
from topologies.topics import MEMBER_EDGES
from topologies.vector_index import Vector

PERSON = "person:"


@dataclass(frozen=True)
class Record:
    """What a person's earlier events say about them: how many of those events sit in a
    concept, how many distinct concepts that is, and their share of the tenant's events over
    the same time."""

    events: int
    themes: int
    share: float


def correspondent(title: str, participants: list[str]) -> str | None:
    """The ``person:`` entity of the participant whose name heads the message (a direct
    message's heading), or None when the heading is not a participant's name."""
    heading = re.sub(r"\s+", " ", title).strip().lower()
    if not heading:
        return None
    wanted = PERSON + heading
    for participant in participants:
        if wanted in extract_entities("", [participant]):
            return wanted
    return None


def record_of(memory: EntityHolder, person: str, before: datetime, exclude: str) -> Record:
    """The person's events before ``before`` (the entity index's postings, at most its
    ``per_entity`` latest), the live concepts those events are members of, and the share of
    the tenant's events since the first of them that are theirs."""
    graph = memory.graph
    concepts = graph.ids(NodeKind.CONCEPT)
    posted = [
        (ts, node_id)
        for ts, node_id in memory.entities.postings(person)
        if ts < before and node_id != exclude
    ]
    in_concepts = 0
    themes: set[str] = set()
    for _, node_id in posted:
        found = {
            edge.dst
            for edge in graph.out_edges(node_id)
            if edge.kind in MEMBER_EDGES and edge.dst in concepts
        }
        if found:
            in_concepts += 1
            themes |= found
    if not posted:
        return Record(0, 0, 0.0)
    stream = memory.entities.count_between(posted[0][0], before)
    return Record(in_concepts, len(themes), len(posted) / max(stream, len(posted)))


def name_weight(record: Record, config: TopicConfig) -> float:
    """How much the correspondent's name counts: fully while the record is young, while the
    person writes about one theme, and when they take part in more of the stream than
    ``name_share_max`` (by default no one); ``1 / themes`` otherwise."""
    if record.events < config.name_record_min or record.themes <= 1:
        return 1.0
    if record.share > config.name_share_max:
        return 1.0
    return 1.0 / record.themes


def heading_weight(
    memory: EntityHolder, event: RawEvent, node_id: str, config: TopicConfig
) -> float:
    """The weight of an event's heading in its topic vector: below 1 only for a message headed
    by a correspondent whose earlier events span several concepts."""
    if not event.body:
        return 1.0
    person = correspondent(event.title, event.participants)
    if person is None:
        return 1.0
    ensure_entity_index(memory)  # a memory loaded without its derived index gets it back
    return name_weight(record_of(memory, person, event.ts, node_id), config)


def blend(whole: Vector, body: Vector, weight: float) -> Vector:
    """The vector a message's topic is formed from: its whole text's embedding (heading and
    body) at ``weight``, its body's alone at the rest."""
    mixed = weight * np.asarray(whole, dtype=np.float32) + (1.0 - weight) * np.asarray(body)
    return mixed.astype(np.float32)
