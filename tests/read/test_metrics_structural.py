"""Unit tests of the structural benchmark's metric functions."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from benchmarks.metrics_structural import (
    chain_discovery,
    clustering,
    compression,
    entropy,
    gini,
    modularity,
    pagerank_gini,
    proactivity,
    purity,
    soft_match,
)


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
