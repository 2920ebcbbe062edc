"""The context's personalized PageRank: buffered power iteration, same ranks to the bit."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy import sparse

from topologies.context import DENSE_PAGERANK_MAX, personalized_pagerank


def fresh_arrays_pagerank(
    size: int, rows: npt.NDArray[np.intp], cols: npt.NDArray[np.intp],
    weights: npt.NDArray[np.float64], seeds: npt.NDArray[np.float64], alpha: float,
) -> npt.NDArray[np.float64]:  # fmt: skip
    """The power iteration written plainly, a new array per step (the reference)."""
    teleport = seeds / seeds.sum()
    backward: npt.NDArray[np.float64] | sparse.csr_matrix
    if size <= DENSE_PAGERANK_MAX:
        dense = np.zeros((size, size))
        np.add.at(dense, (rows, cols), weights)
        out_weight = dense.sum(axis=1)
        dangling = out_weight == 0
        scale = np.divide(1.0, out_weight, out=np.zeros(size), where=~dangling)
        backward = np.ascontiguousarray((dense * scale[:, None]).T)
    else:
        matrix = sparse.csr_matrix((weights, (rows, cols)), shape=(size, size))
        out_weight = np.asarray(matrix.sum(axis=1)).ravel()
        dangling = out_weight == 0
        scale = np.divide(1.0, out_weight, out=np.zeros(size), where=~dangling)
        backward = (sparse.diags(scale) @ matrix).T.tocsr()
    restart = (1.0 - alpha) * teleport
    spill = np.flatnonzero(dangling)
    ranks = teleport.copy()
    for _ in range(100):
        previous = ranks
        step = backward @ previous
        if len(spill):
            step += previous[spill].sum() * teleport
        ranks = alpha * step
        ranks += restart
        if np.abs(ranks - previous).sum() < size * 1e-8:
            break
    return np.asarray(ranks)


@pytest.mark.parametrize("size", [1, 7, 140, DENSE_PAGERANK_MAX + 40])
def test_ranks_equal_the_plain_power_iteration_to_the_bit(size: int) -> None:
    rng = np.random.default_rng(size)
    edges = 3 * size
    rows = rng.integers(0, size, edges)
    cols = rng.integers(0, size, edges)
    keep = rows % 5 != 0  # every fifth row dangles: its mass returns to the seeds
    rows, cols = rows[keep], cols[keep]
    weights = rng.uniform(0.01, 2.0, len(rows))
    seeds = np.where(rng.uniform(size=size) < 0.3, rng.uniform(size=size), 0.0)
    seeds[0] = 1.0
    got = personalized_pagerank(size, rows, cols, weights, seeds, 0.85)
    want = fresh_arrays_pagerank(size, rows, cols, weights, seeds, 0.85)
    assert got.tolist() == want.tolist()
