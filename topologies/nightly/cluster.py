"""Phase 1: two-stage DBSCAN over the semantic vectors of fresh facts (no LLM).

Stage 1 runs DBSCAN (cosine distance, ``eps1``, ``min_samples``) over every fresh fact;
each cluster larger than ``max_cluster`` is clustered again with the tighter ``eps2``. Points
a second pass labels noise stay fresh for a later night; an over-sized cluster the second
pass cannot split is kept whole. Clusters come back largest first (ties: first id).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class ClusterConfig:
    eps1: float = 0.35  # DCPM: cosine distance of the first pass
    eps2: float = 0.25  # tighter pass inside over-sized clusters
    min_samples: int = 3
    max_cluster: int = 30  # "over-sized": larger clusters get the second pass
    max_facts: int = 5000  # most recent fresh facts considered per run (O(n^2) distances)


# Measured calibration (benchmarks: CogEval "life" tenant, 509 facts, purity vs. gold concepts):
# DCPM's eps were tuned on bge-m3, whose cosines run higher than MiniLM's. With MiniLM,
# eps1 0.35 / eps2 0.25 cluster 26 facts (5 %) into 7 clusters (purity 0.73); 0.50 / 0.40
# cluster 119 (23 %) into 22 (purity 0.59). Embedders not listed keep the paper's values.
CALIBRATED_EPS: dict[str, tuple[float, float]] = {
    "all-MiniLM-L6-v2-int8-onnx": (0.50, 0.40),
}


def cluster_config_for(model_id: str) -> ClusterConfig:
    eps = CALIBRATED_EPS.get(model_id)
    return ClusterConfig() if eps is None else ClusterConfig(eps1=eps[0], eps2=eps[1])


def _dbscan(matrix: npt.NDArray[np.float32], eps: float, min_samples: int) -> npt.NDArray[np.int_]:
    from sklearn.cluster import DBSCAN  # heavy import, only when a night runs

    if len(matrix) < min_samples:
        return np.full(len(matrix), -1, dtype=int)
    model = DBSCAN(eps=eps, min_samples=min_samples, metric="cosine")
    return np.asarray(model.fit_predict(matrix), dtype=int)


def _groups(ids: list[str], labels: npt.NDArray[np.int_]) -> list[list[int]]:
    found: dict[int, list[int]] = {}
    for pos, label in enumerate(labels):
        if label >= 0:
            found.setdefault(int(label), []).append(pos)
    return list(found.values())


def two_stage_dbscan(
    ids: list[str], matrix: npt.NDArray[np.float32], config: ClusterConfig | None = None
) -> list[list[str]]:
    """Clusters of ids (each at least ``min_samples`` long), largest first."""
    cfg = config or ClusterConfig()
    if len(ids) != len(matrix):
        raise ValueError("ids and matrix rows differ")
    clusters: list[list[str]] = []
    for group in _groups(ids, _dbscan(matrix, cfg.eps1, cfg.min_samples)):
        if len(group) <= cfg.max_cluster:
            clusters.append([ids[p] for p in group])
            continue
        sub_labels = _dbscan(matrix[group], cfg.eps2, cfg.min_samples)
        subs = _groups([ids[p] for p in group], sub_labels)
        if not subs:
            clusters.append([ids[p] for p in group])
            continue
        clusters.extend([ids[group[p]] for p in sub] for sub in subs)
    clusters.sort(key=lambda c: (-len(c), c[0]))
    return clusters
