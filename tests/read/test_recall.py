"""Hou et al.'s recall model and cued recall (a write that yields a ChangeSet)."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from read_helpers import T0, Builder

from schemas.query import QueryRequest, RecallRequest
from topologies.embedding import HashingEmbedder
from topologies.read import Reader, consolidation_step, recall_probability
from topologies.read.recall_model import RECALL_ATTR, RecallState, consolidation_gain


def test_probability_formula() -> None:
    assert recall_probability(1.0, 0.0, 1.0) == pytest.approx(1.0)
    r, t, g = 0.9, 2.0, 3.0
    expected = (1 - math.exp(-r * math.exp(-t / g))) / (1 - math.exp(-1))
    assert recall_probability(r, t, g) == pytest.approx(expected)
    assert recall_probability(0.9, 5.0, 1.0) < recall_probability(0.9, 1.0, 1.0)
    assert recall_probability(0.9, 2.0, 4.0) > recall_probability(0.9, 2.0, 1.0)
    assert recall_probability(0.0, 0.0, 1.0) == 0.0


def test_gain_is_the_given_sigmoid() -> None:
    assert consolidation_gain(0.0) == 0.0
    assert consolidation_gain(1.0) == pytest.approx((1 - math.exp(-1)) / (1 + math.exp(-1)))
    assert consolidation_gain(30.0) < 1.0
    assert consolidation_step(1.0, 2.0) == pytest.approx(1.0 + math.tanh(1.0))


def test_spaced_recalls_consolidate_more_than_massed() -> None:
    spaced = massed = RecallState(g=1.0)
    for day in range(1, 5):
        spaced = spaced.recalled(T0 + timedelta(days=3 * day), T0, keep=8)
        massed = massed.recalled(T0 + timedelta(days=3, minutes=10 * day), T0, keep=8)
    assert spaced.n == massed.n == 4
    assert spaced.g > massed.g + 2.0
    later = timedelta(days=5)
    p_spaced = recall_probability(0.9, later.days, spaced.g)
    p_massed = recall_probability(0.9, later.days, massed.g)
    assert p_spaced > p_massed


def _recall_world(embedder: HashingEmbedder) -> Builder:
    b = Builder(embedder)
    b.event("n1", "Ice cream", "ice cream after work as a reward", hours=0)
    b.event("n2", "Hawaii", "dream of a Hawaii vacation after the paper deadline", hours=1)
    return b


def test_cued_recall_threshold_and_write(embedder: HashingEmbedder) -> None:
    b = _recall_world(embedder)
    reader = Reader(embedder)
    now = T0 + timedelta(hours=2)
    cue = "ice cream after work as a reward"
    response, changes = reader.recall(b.memory, RecallRequest(text=cue, now=now))
    assert [h.event_ids for h in response.items] == [["n1"]]  # only the matching memory
    hit = response.items[0]
    assert hit.p >= 0.86 and hit.recalls == 1 and hit.relevance > 0.9
    assert hit.consolidation > 1.0
    node = b.memory.graph.node(hit.node_id)
    assert node.attrs[RECALL_ATTR]["n"] == 1
    assert set(changes.nodes) == {hit.node_id}  # the ChangeSet to persist
    # a weaker cue does not clear the threshold; a lower threshold lets it through
    weak = "reward ice"
    response, changes = reader.recall(b.memory, RecallRequest(text=weak, now=now))
    assert response.items == [] and changes.empty
    response, _ = reader.recall(b.memory, RecallRequest(text=weak, now=now, threshold=0.2))
    assert response.items


def test_spaced_schedule_keeps_a_memory_recallable(embedder: HashingEmbedder) -> None:
    cue = "ice cream after work as a reward"
    last = T0 + timedelta(days=18)
    spaced_world, massed_world = _recall_world(embedder), _recall_world(embedder)
    reader = Reader(embedder)
    response, _ = reader.recall(spaced_world.memory, RecallRequest(text=cue, now=last))
    assert response.items == []  # 18 days without a recall: p < 0.86 (g0 = 1 day)
    for day in (3, 6, 9, 12, 15, 18):  # spaced: every 3 days
        reader.recall(
            spaced_world.memory,
            RecallRequest(text=cue, now=T0 + timedelta(days=day), threshold=0.0, limit=1),
        )
    for minute in range(1, 7):  # massed: six recalls within minutes
        reader.recall(
            massed_world.memory,
            RecallRequest(text=cue, now=last + timedelta(minutes=minute), threshold=0.0, limit=1),
        )
    probe = RecallRequest(text=cue, now=last + timedelta(hours=12))
    spaced, _ = reader.recall(spaced_world.memory, probe)
    massed, _ = reader.recall(massed_world.memory, probe)
    assert spaced.items and spaced.items[0].event_ids == ["n1"]
    assert spaced.items[0].recalls == 7 and spaced.items[0].consolidation > 5.0
    assert massed.items == []


def test_query_reports_recall_p_without_writing(embedder: HashingEmbedder) -> None:
    b = _recall_world(embedder)
    reader = Reader(embedder)
    res = reader.query(b.memory, QueryRequest(text="ice cream reward", k=1))
    assert res.items[0].explanation.recall_p is not None
    assert RECALL_ATTR not in b.memory.graph.node(res.items[0].node_id).attrs
