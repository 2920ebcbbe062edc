"""Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks 1-based."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float] | None = None,
    k: int = 60,
) -> dict[str, float]:
    """Fuse ranked lists (best first) of (id, score); the scores themselves are ignored."""
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        if weight <= 0.0:
            continue
        for rank, (item, _) in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused
