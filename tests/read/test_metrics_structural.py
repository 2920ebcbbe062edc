"""Unit tests of the structural benchmark's metric functions."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from benchmarks.bench_structural import (
    GoldItem,
    concept_events,
    intent_events,
    live_concepts,
    load_sample,
    score_issue,
)
from benchmarks.metrics_structural import (
    chain_discovery,
    clustering,
    compression,
    duplicate_matches,
    entropy,
    evidence_match,
    gini,
    jaccard,
    majority_group,
    modularity,
    pagerank_gini,
    proactivity,
    purity,
    set_match,
    soft_match,
)
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentStatus
from tests.read.read_helpers import T0, Builder
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.executor import PlanExecutor
from topologies.scope import FoldScope


def _unit(rows: list[list[float]]) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def test_soft_match_is_one_to_one_with_threshold() -> None:
    gold = _unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    pred = _unit([[1, 0.05, 0], [0.9, 0.1, 0], [0, 0.2, 1]])  # two near gold 0, none near 1
    m = soft_match(pred, gold, 0.75)
    assert len(m.pairs) == 2  # gold 0 used once (Hungarian), gold 2 matched
    assert m.precision == pytest.approx(2 / 3) and m.recall == pytest.approx(2 / 3)
    assert m.f1 == pytest.approx(2 / 3)
    assert soft_match(pred[:0], gold).f1 == 0.0


def test_purity_and_compression() -> None:
    assert purity([["a", "a", "b"], ["c"]]) == pytest.approx(3 / 4)
    assert purity([]) == 0.0
    assert compression(40, 8) == 5.0 and compression(3, 0) == 0.0


def test_chain_discovery_counts_reachable_hops() -> None:
    g = nx.path_graph(["e1", "c1", "c2", "e2"])
    g.add_node("e3")
    whole, pairs = chain_discovery(g, [["e1", "e2"], ["e1", "e2", "e3"]], max_hops=3)
    assert whole == 0.5 and pairs == pytest.approx(2 / 3)
    assert chain_discovery(g, [["e1", "e2"]], max_hops=2) == (0.0, 0.0)


def test_clustering_modularity_entropy_gini() -> None:
    triangle = nx.complete_graph(3)
    assert clustering(triangle) == 1.0
    two = nx.disjoint_union(nx.complete_graph(4), nx.complete_graph(4))
    assert modularity(two) == pytest.approx(0.5)
    assert entropy(["A", "B"]) == 1.0 and entropy(["A", "A"]) == 0.0
    assert entropy(["A", "B"], normalise_by=4) == pytest.approx(0.5)
    assert gini([1, 1, 1, 1]) == pytest.approx(0.0)
    assert gini([0, 0, 0, 1]) == pytest.approx(0.75)
    star = nx.star_graph(10)
    assert pagerank_gini(star) > pagerank_gini(nx.cycle_graph(11))
    assert math.isclose(proactivity([0, 2, 3, 1]), 0.5)


# ------------------------------------------------------------------ issue 11 metrics
def test_soft_match_counts_a_pair_only_above_its_threshold() -> None:
    gold = _unit([[1, 0]])
    pred = _unit([[1, 1.02]])  # cosine 0.70 with gold
    assert soft_match(pred, gold, 0.6).f1 == 1.0
    assert soft_match(pred, gold, 0.75).f1 == 0.0


def test_title_recall_is_one_to_one() -> None:
    """One title halfway between two goals matches one of them, not both."""
    gold = _unit([[1, 0, 0], [0, 1, 0]])
    title = _unit([[1, 1, 0]])  # cosine 0.707 with each goal
    assert soft_match(title, gold, 0.5).recall == 0.5  # "any title near it" would say 1.0


def test_jaccard() -> None:
    assert jaccard({1, 2}, {2, 3}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 0.0


def test_set_match_uses_the_best_one_to_one_assignment_not_greedy() -> None:
    g1, g2 = set(range(1, 11)), set(range(11, 21))
    a = set(range(1, 7)) | set(range(11, 16))  # J(a, g1) = 6/15 = 0.40, J(a, g2) = 5/16
    b = {1, 2, 3, 4, 99}  # J(b, g1) = 4/11 = 0.36, J(b, g2) = 0
    match = set_match([a, b], [g1, g2], 0.3)
    # greedy (a-g1 first) would leave b on g2 at Jaccard 0 and count one pair: F1 0.5;
    # best-first by predicted set (a->g1, b->g1) would count g1 twice
    assert sorted((p, g) for p, g, _ in match.pairs) == [(0, 1), (1, 0)]
    assert match.precision == match.recall == match.f1 == 1.0


def test_set_match_threshold_and_denominators() -> None:
    pred = [{1, 2, 3}, {4, 5, 6, 7}, {50}]
    gold = [{1, 2, 3, 4}, set(range(5, 15))]
    match = set_match(pred, gold, 0.3)  # 0.75 counts; {4..7} vs gold 2 is 3/11 = 0.27
    assert [(p, g) for p, g, _ in match.pairs] == [(0, 0)]
    assert match.precision == pytest.approx(1 / 3) and match.recall == 0.5
    assert match.f1 == pytest.approx(0.4)
    assert set_match([], gold).f1 == 0.0 and set_match(pred, []).f1 == 0.0


def test_evidence_match_share_of_the_intents_own_evidence() -> None:
    gold = [{f"e{i}" for i in range(1, 11)}, {"e11", "e12", "e13", "e14"}]
    emitted = [
        {"e1", "e2"},  # all in gold 0, though only 2 of its 10 events
        {"e1", "e2", "e3", "e11", "e12", "e13", "e20"},  # 3 of 7 in either: no majority
        {"e11"},  # one event is too little
        {"e1", "e2", "e11", "e12"},  # half in each: matches both
    ]
    match = evidence_match(emitted, gold)
    assert match.matches == [[0], [], [], [0, 1]]
    assert match.precision == 0.5 and match.recall == 1.0
    assert evidence_match([], gold).precision == 0.0 and evidence_match([], gold).recall == 0.0


def test_duplicate_matches_counts_repeats_of_one_goal() -> None:
    assert duplicate_matches([[0], [0], [], [0, 1], [1]]) == 2
    assert duplicate_matches([[0], [1]]) == 0


def test_majority_group_needs_more_than_half() -> None:
    groups = {"x": {"a", "b"}, "y": {"c", "d"}}
    assert majority_group({"a", "b", "c"}, groups) == "x"
    assert majority_group({"a", "b", "c", "d"}, groups) is None  # half is not most
    assert majority_group(set(), groups) is None


# --------------------------------------------------------------- reading the graph
def _folded_memory() -> Builder:
    """c2 merged into c1; c3 superseded; one pending intent triggered by c1."""
    b = Builder(HashingEmbedder())
    ev = {i: b.event(f"e{i}", f"event {i}", hours=i) for i in range(1, 6)}
    b.node("c1", NodeKind.CONCEPT, "Passport renewal")
    b.node("c2", NodeKind.CONCEPT, "Passport photo")
    b.node("c3", NodeKind.CONCEPT, "Old view", superseded_by="c1")
    b.edge(ev[1], "c1", EdgeKind.GROUNDS)
    b.edge("c1", ev[2], EdgeKind.DERIVED_FROM)
    b.edge(ev[3], "c2", EdgeKind.REINFORCES)
    b.edge(ev[5], "c3", EdgeKind.GROUNDS)
    memory = b.memory
    memory.begin()
    scope = FoldScope(memory.tenant, "e5", ev[5], T0)
    PlanExecutor(b.embedder, EngineConfig()).merge(memory, scope, "c1", "c2")
    memory.commit()
    b.node("i1", NodeKind.INTENT, "Renew passport before the trip", status=IntentStatus.PENDING)
    b.edge("c1", "i1", EdgeKind.TRIGGERS)
    b.edge(ev[4], "i1", EdgeKind.GROUNDS)
    return b


def test_members_come_through_merges_and_superseded_concepts_are_left_out() -> None:
    memory = _folded_memory().memory
    assert [c.id for c in live_concepts(memory.graph)] == ["c1"]
    assert concept_events(memory.graph, "c1") == {"e1", "e2", "e3"}
    # the intent's public view: events grounding or reinforcing it or its concepts
    assert intent_events(memory, memory.graph.node("i1")) == {"e1", "e3", "e4"}


def test_score_issue_on_a_hand_built_memory() -> None:
    b = _folded_memory()
    concepts = [
        GoldItem("g1", "Passport renewal", frozenset({"e1", "e2", "e3"})),
        GoldItem("g2", "Dentist", frozenset({"e5"})),
    ]
    intents = [GoldItem("i", "Renew passport before the trip", frozenset({"e1", "e3", "e4"}))]
    f = score_issue(b.memory, concepts, intents, b.embedder).figures
    assert f["announced"] == 1  # no messages given: the intents in the graph
    assert f["concepts"] == 1 and f["gold_concepts"] == 2 and f["concept_ratio"] == 0.5
    assert f["label_f1@0.6"] == pytest.approx(2 / 3)  # P 1/1, R 1/2
    assert f["grounded_f1"] == pytest.approx(2 / 3)
    assert f["intents"] == 1 and f["pending"] == 1
    assert f["intent_title_recall@0.5"] == 1.0
    assert f["intent_evidence_precision"] == 1.0 and f["intent_evidence_recall"] == 1.0


def test_sample_themes_place_every_event_once() -> None:
    events, themes = load_sample()
    placed = [e for t in themes for e in t.events]
    assert len(placed) == len(set(placed)) == len(events) == 157
    goals = [t for t in themes if t.kind == "goal"]
    assert len(goals) == 6 and all(t.goal for t in goals)
