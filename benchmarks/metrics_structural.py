"""Structural metrics of a memory graph against a CogEval-style gold graph.

Pure functions over numpy arrays, sets and networkx graphs, so each one is unit-tested on its
own. The matching rules (issue 11):

- labels and titles: ``soft_match``, one-to-one (Hungarian, maximum total cosine) between
  embedded predicted and gold texts; a pair counts when its cosine reaches the threshold.
- event sets: ``set_match``, the same one-to-one rule on Jaccard similarity (a pair counts at
  Jaccard >= 0.3 by default).
- intent evidence: ``evidence_match``, many-to-many: an emitted intent matches a gold intent
  when at least half of its evidence events, and at least two, lie in the gold intent's set.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

import networkx as nx
import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SoftMatch:
    precision: float
    recall: float
    f1: float
    pairs: list[tuple[int, int, float]]  # (predicted index, gold index, cosine)


def soft_match(pred: Array, gold: Array, threshold: float = 0.75) -> SoftMatch:
    """One-to-one matching (Hungarian, max total cosine) of unit vectors; pairs below the
    threshold do not count. Rows are L2-normalised embeddings."""
    if len(pred) == 0 or len(gold) == 0:
        return SoftMatch(0.0, 0.0, 0.0, [])
    sim = np.asarray(pred, dtype=np.float64) @ np.asarray(gold, dtype=np.float64).T
    return assign(sim, threshold)


def assign(scores: npt.NDArray[np.float64], threshold: float) -> SoftMatch:
    """One-to-one assignment of rows (predicted) to columns (gold) maximising the total score
    (Hungarian); assigned pairs scoring below ``threshold`` do not count.
    precision = pairs / rows, recall = pairs / columns."""
    n_pred, n_gold = scores.shape
    if n_pred == 0 or n_gold == 0:
        return SoftMatch(0.0, 0.0, 0.0, [])
    rows, cols = linear_sum_assignment(-scores)
    pairs = [
        (int(r), int(c), float(scores[r, c]))
        for r, c in zip(rows, cols, strict=True)
        if scores[r, c] >= threshold
    ]
    p = len(pairs) / n_pred
    r = len(pairs) / n_gold
    f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    return SoftMatch(p, r, f1, pairs)


def jaccard(a: Set[Hashable], b: Set[Hashable]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def set_match(
    pred: Sequence[Set[Hashable]], gold: Sequence[Set[Hashable]], threshold: float = 0.3
) -> SoftMatch:
    """Grounded match of event sets: one-to-one (Hungarian, max total Jaccard) between
    predicted and gold sets; an assigned pair counts when its Jaccard is >= ``threshold``.
    precision = pairs / predicted sets, recall = pairs / gold sets."""
    scores = np.array([[jaccard(p, g) for g in gold] for p in pred], dtype=np.float64)
    return assign(scores.reshape(len(pred), len(gold)), threshold)


@dataclass(frozen=True)
class EvidenceMatch:
    precision: float  # share of emitted intents that match some gold intent
    recall: float  # share of gold intents matched by at least one emitted intent
    matches: list[list[int]]  # per emitted intent: the gold intents it matches


def evidence_covers(evidence: Set[Hashable], gold: Set[Hashable], minimum: int = 2) -> bool:
    """Whether at least half of ``evidence``, and at least ``minimum`` items, lie in ``gold``."""
    inside = len(evidence & gold)
    return inside >= minimum and 2 * inside >= len(evidence)


def evidence_match(
    emitted: Sequence[Set[Hashable]], gold: Sequence[Set[Hashable]], minimum: int = 2
) -> EvidenceMatch:
    """Intents matched by their evidence events, many-to-many (a goal reached by two intents
    counts once in recall; both intents count in precision).

    An emitted intent matches a gold intent when at least half of its evidence events, and at
    least ``minimum``, lie in the gold intent's evidence set (the events of its supporting
    concepts). Precision = share of emitted intents matching some gold intent; recall = share
    of gold intents matched by at least one emitted intent (0 when there are none)."""
    matches = [[j for j, g in enumerate(gold) if evidence_covers(e, g, minimum)] for e in emitted]
    hit_gold = {j for row in matches for j in row}
    precision = sum(1 for row in matches if row) / len(emitted) if emitted else 0.0
    recall = len(hit_gold) / len(gold) if gold else 0.0
    return EvidenceMatch(precision, recall, matches)


def duplicate_matches(matches: Sequence[Sequence[int]]) -> int:
    """Intents (in emission order) whose every matched gold intent an earlier intent already
    matched: the would-be-merged repeats of one goal (0 = one intent per goal)."""
    seen: set[int] = set()
    repeats = 0
    for row in matches:
        if row and set(row) <= seen:
            repeats += 1
        seen.update(row)
    return repeats


def majority_group(items: Set[Hashable], groups: Mapping[str, Set[Hashable]]) -> str | None:
    """The group holding more than half of ``items`` (None when none does, or no items)."""
    if not items:
        return None
    for name, members in groups.items():
        if 2 * len(items & members) > len(items):
            return name
    return None


def purity(clusters: Iterable[Sequence[Hashable]]) -> float:
    """Share of clustered items whose cluster's majority gold label is their own."""
    total = majority = 0
    for labels in clusters:
        if not labels:
            continue
        total += len(labels)
        majority += Counter(labels).most_common(1)[0][1]
    return majority / total if total else 0.0


def compression(events: int, concepts: int) -> float:
    return events / concepts if concepts else 0.0


def chain_discovery(
    graph: nx.Graph, chains: Sequence[Sequence[Hashable]], max_hops: int = 4
) -> tuple[float, float]:
    """(share of chains whose every consecutive pair is within max_hops, share of pairs)."""
    if not chains:
        return 0.0, 0.0
    found_chains = found_pairs = pairs = 0
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    for chain in chains:
        ok = True
        for a, b in itertools.pairwise(chain):
            pairs += 1
            reach = (
                a in undirected
                and b in undirected
                and b in nx.single_source_shortest_path_length(undirected, a, cutoff=max_hops)
            )
            found_pairs += int(reach)
            ok = ok and reach
        found_chains += int(ok)
    return found_chains / len(chains), found_pairs / pairs if pairs else 0.0


def simple_undirected(graph: nx.Graph) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from((u, v) for u, v in graph.edges() if u != v)
    return g


def clustering(graph: nx.Graph) -> float:
    g = simple_undirected(graph)
    return float(nx.average_clustering(g)) if len(g) else 0.0


def modularity(graph: nx.Graph) -> float:
    """Modularity of the greedy-modularity partition of the simple undirected graph."""
    g = simple_undirected(graph)
    if g.number_of_edges() == 0:
        return 0.0
    parts = nx.community.greedy_modularity_communities(g)
    return float(nx.community.modularity(g, parts))


def entropy(labels: Iterable[Hashable], normalise_by: int | None = None) -> float:
    """Shannon entropy in bits; divided by log2(normalise_by) when given (0..1)."""
    counts = Counter(labels)
    total = sum(counts.values())
    if total == 0:
        return 0.0
    h = -sum(c / total * math.log2(c / total) for c in counts.values())
    if normalise_by:
        return h / math.log2(normalise_by) if normalise_by > 1 else 0.0
    return h


def gini(values: Sequence[float]) -> float:
    """Gini coefficient of non-negative values (0 = equal, ->1 = concentrated)."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    if n == 0 or x.sum() == 0:
        return 0.0
    index = np.arange(1, n + 1)
    return float((2 * (index * x).sum()) / (n * x.sum()) - (n + 1) / n)


def pagerank_gini(graph: nx.Graph) -> float:
    g = simple_undirected(graph)
    if g.number_of_edges() == 0:
        return 0.0
    return gini(list(nx.pagerank(g).values()))


def proactivity(grounding_links: Sequence[int], minimum: int = 2) -> float:
    """Share of intents with at least ``minimum`` grounding links."""
    if not grounding_links:
        return 0.0
    return sum(1 for n in grounding_links if n >= minimum) / len(grounding_links)
