"""Temporal contiguity: an event's stream neighbours are the events of its own source beside it."""

from __future__ import annotations

from datetime import timedelta

from tests.read.read_helpers import Builder, eid
from topologies.embedding import HashingEmbedder
from topologies.read.timeline import Timeline

GAP = timedelta(minutes=30)


def _stream(embedder: HashingEmbedder) -> Builder:
    b = Builder(embedder)
    b.event("chat-1", "Jonas", "tickets booked", hours=0.0, source="chat")
    b.event("mail-1", "Insurer", "claim received", hours=0.1, source="email")
    b.event("mail-2", "Insurer", "claim approved", hours=0.2, source="email")
    b.event("chat-2", "Jonas", "see you at the gate", hours=0.3, source="chat")
    b.event("chat-3", "Jonas", "landed", hours=5.0, source="chat")
    return b


def test_neighbours_are_the_events_of_the_same_source_beside_it(
    embedder: HashingEmbedder,
) -> None:
    b = _stream(embedder)
    timeline = Timeline()
    timeline.build(b.memory)
    # the two mails in between are another source's: chat-1 and chat-2 are still neighbours
    assert timeline.neighbours(eid(b, "chat-1"), GAP) == [eid(b, "chat-2")]
    assert timeline.neighbours(eid(b, "chat-2"), GAP) == [eid(b, "chat-1")]  # chat-3: too late
    assert timeline.neighbours(eid(b, "mail-1"), GAP) == [eid(b, "mail-2")]
    assert timeline.neighbours(eid(b, "chat-3"), timedelta(hours=5)) == [eid(b, "chat-2")]
    assert timeline.neighbours("unknown", GAP) == []


def test_neighbours_follow_added_and_removed_events(embedder: HashingEmbedder) -> None:
    b = _stream(embedder)
    timeline = Timeline()
    timeline.build(b.memory)
    b.event("chat-9", "Jonas", "boarding now", hours=0.2, source="chat")
    timeline.apply(b.changes[-1])
    assert timeline.neighbours(eid(b, "chat-1"), GAP) == [eid(b, "chat-9")]
    assert timeline.neighbours(eid(b, "chat-9"), GAP) == [eid(b, "chat-1"), eid(b, "chat-2")]
    b.memory.begin()
    b.memory.graph.remove_node(eid(b, "chat-9"))
    timeline.apply(b.memory.commit())
    assert timeline.neighbours(eid(b, "chat-1"), GAP) == [eid(b, "chat-2")]
    assert len(timeline) == 5
