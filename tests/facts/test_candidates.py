"""Reconcile's candidates: each current belief is read once, however it was found."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from schemas.events import RawEvent
from schemas.graph import Node, NodeKind
from tests.facts.helpers import T0, engine
from topologies.embedding import HashingEmbedder
from topologies.facts.reconcile import ReconcileConfig, candidates
from topologies.facts.slots import slots_of
from topologies.facts.step import event_author

STATEMENTS = [
    "I drink three espressos a day to get through the week.",
    "I go running by the river every Sunday morning.",
    "I now drink a single espresso a day, before noon.",
]


def statement(i: int, text: str) -> RawEvent:
    return RawEvent(
        id=f"s-{i}", tenant="alice", source="chat", ts=T0 + timedelta(days=i),
        title="chat with assistant", body=text,
    )  # fmt: skip


async def test_a_belief_found_by_both_the_knn_and_the_slot_index_is_read_once(
    embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    for i, text in enumerate(STATEMENTS):
        await eng.fold(memory, statement(i, text))
    beliefs = {n.id for n in memory.graph.nodes(NodeKind.FACT) if not n.superseded_by}
    assert beliefs
    item = statement(9, "I drink one espresso a day now.")
    slots = slots_of(item.body, event_author(item))
    assert slots.asserts  # the slot index is asked too
    vector = embedder.embed([item.body])[0]
    reads: Counter[str] = Counter()
    read = memory.graph.get

    def counting_get(node_id: str) -> Node | None:
        reads[node_id] += 1
        return read(node_id)

    monkeypatch.setattr(memory.graph, "get", counting_get)
    found = candidates(memory, vector, slots, ReconcileConfig(), set(), item.ts)
    assert {c.head.id for c in found} == beliefs  # every current belief of alice
    # once by the slot index (deleted ids are skipped), once as a candidate
    assert max(reads[b] for b in beliefs) <= 2
