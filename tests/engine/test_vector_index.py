"""The vector index past its exact range: an inverted file (IVF) that keeps removal, rollback,
persistence and replay exact, with the recall of the exact scan on clustered data."""

from __future__ import annotations

import numpy as np
import pytest

from topologies.config import AnnConfig
from topologies.memory import TenantMemory
from topologies.vector_index import CENTROID_PREFIX, VectorIndex, normalize

DIM = 16
SMALL = AnnConfig(min_vectors=200, nprobe=8)  # 16 buckets at 200 vectors, 32 at 256, 64 at 1024


def clustered(count: int, seed: int = 0, topics: int = 24) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(topics, DIM))
    picks = rng.integers(0, topics, size=count)
    return (centres[picks] + 0.25 * rng.normal(size=(count, DIM))).astype(np.float32)


def filled(count: int, ann: AnnConfig = SMALL, seed: int = 0) -> VectorIndex:
    index = VectorIndex(DIM, ann)
    for row, vec in enumerate(clustered(count, seed)):
        index.upsert(f"n{row:05d}", vec)
    return index


def exact_twin(index: VectorIndex) -> VectorIndex:
    twin = VectorIndex(DIM, AnnConfig(min_vectors=10**9))
    for name in index.ids():
        vec = index.get(name)
        assert vec is not None
        twin.load(name, vec)
    return twin


def test_an_index_stays_exact_below_the_threshold_and_switches_at_it() -> None:
    index = filled(199)
    assert not index.approximate and index.lists == 0 and index.centroid_ids() == []
    index.upsert("n00199", clustered(1, seed=9)[0])
    assert index.approximate and index.lists == 16
    assert len(index.centroid_ids()) == 16
    assert len(index) == 200


def test_the_inverted_file_finds_what_the_exact_scan_finds() -> None:
    index = filled(1200)
    exact = exact_twin(index)
    queries = clustered(100, seed=5)
    overlap = [
        len({n for n, _ in index.search(q, 10)} & {n for n, _ in exact.search(q, 10)}) / 10
        for q in queries
    ]
    assert float(np.mean(overlap)) >= 0.9
    top = [index.search(q, 1)[0][0] == exact.search(q, 1)[0][0] for q in queries]
    assert float(np.mean(top)) >= 0.95


def test_removal_update_merge_and_exclusion_work_on_the_inverted_file() -> None:
    index = filled(400)
    assert index.approximate
    vec = index.get("n00010")
    assert vec is not None
    assert index.search(vec, 1)[0][0] == "n00010"
    assert [n for n, _ in index.search(vec, 1, exclude={"n00010"})] != ["n00010"]

    index.remove("n00010")
    assert "n00010" not in index and len(index) == 399
    assert all(n != "n00010" for n, _ in index.search(vec, 20))

    index.upsert("n00011", vec)  # update moves the vector to its new bucket
    assert index.search(vec, 1) == [("n00011", pytest.approx(1.0, abs=1e-5))]

    index.merge("n00011", "n00012")
    assert "n00012" not in index and "n00011" in index
    assert len(index) == 398


def test_the_layout_grows_with_the_index() -> None:
    index = filled(1100)
    assert index.lists == 64  # retrained once the size called for twice the buckets
    assert len(index) == 1100


def test_a_rolled_back_fold_that_trained_the_layout_restores_the_exact_scan() -> None:
    memory = TenantMemory("t", DIM, SMALL)
    index = memory.indexes["EVENT"]
    vectors = clustered(201)
    for row, vec in enumerate(vectors[:199]):
        index.upsert(f"n{row:05d}", vec)
    before = [index.search(q, 5) for q in vectors[:20]]

    memory.begin()
    index.upsert("n00199", vectors[199])
    index.upsert("n00200", vectors[200])
    assert index.approximate
    memory.rollback()

    assert not index.approximate and len(index) == 199
    assert [index.search(q, 5) for q in vectors[:20]] == before


def test_the_changeset_persists_the_centroids_and_a_reload_rebuilds_the_same_layout() -> None:
    memory = TenantMemory("t", DIM, SMALL)
    index = memory.indexes["EVENT"]
    vectors = clustered(600, seed=3)
    stored: dict[tuple[str, str], np.ndarray] = {}
    for row, vec in enumerate(vectors):
        memory.begin()
        index.upsert(f"n{row:05d}", vec)
        for key, value in memory.commit().vectors.items():
            if value is None:
                stored.pop(key, None)
            else:
                stored[key] = value
    centroid_keys = [k for k in stored if k[1].startswith(CENTROID_PREFIX)]
    assert len(centroid_keys) == index.lists == 32

    reloaded = TenantMemory("t", DIM, SMALL)
    reloaded.load([], [], {}, [(i, n, v) for (i, n), v in reversed(stored.items())], {}, {})
    again = reloaded.indexes["EVENT"]
    assert again.lists == index.lists
    for key in centroid_keys:
        assert np.array_equal(again.get(key[1]), index.get(key[1]))
    queries = clustered(30, seed=8)
    assert [[n for n, _ in again.search(q, 5)] for q in queries] == [
        [n for n, _ in index.search(q, 5)] for q in queries
    ]


def test_the_next_retrain_after_a_restart_matches_the_uninterrupted_run() -> None:
    vectors = clustered(1100, seed=4)
    uninterrupted = VectorIndex(DIM, SMALL)
    restarted = VectorIndex(DIM, SMALL)
    for row, vec in enumerate(vectors[:700]):
        uninterrupted.upsert(f"n{row:05d}", vec)
        restarted.upsert(f"n{row:05d}", vec)
    # a restart loads the same vectors and centroids in another order
    reloaded = VectorIndex(DIM, SMALL)
    for name in reversed(restarted.ids() + restarted.centroid_ids()):
        vec = restarted.get(name)
        assert vec is not None
        reloaded.load(name, vec)
    reloaded.finish_load()
    for row, vec in enumerate(vectors[700:], start=700):
        uninterrupted.upsert(f"n{row:05d}", vec)
        reloaded.upsert(f"n{row:05d}", vec)
    assert uninterrupted.lists == reloaded.lists == 64
    for key in uninterrupted.centroid_ids():
        assert np.array_equal(uninterrupted.get(key), reloaded.get(key))


def test_forgetting_every_vector_drops_the_layout_and_its_centroids() -> None:
    memory = TenantMemory("t", DIM, SMALL)
    index = memory.indexes["FACT"]
    for row, vec in enumerate(clustered(300)):
        index.upsert(f"n{row:05d}", vec)
    memory.begin()
    for name in index.ids():
        index.remove(name)
    index.drop_layout()
    change = memory.commit()
    assert not index.approximate
    deleted = [n for (_, n), v in change.vectors.items() if n.startswith(CENTROID_PREFIX)]
    assert len(deleted) == 32
    assert all(change.vectors[("FACT", n)] is None for n in deleted)


@pytest.mark.parametrize("ann", [AnnConfig(min_vectors=10**9), SMALL], ids=["exact", "ivf"])
def test_interleaved_writes_keep_every_vector_readable(ann: AnnConfig) -> None:
    """Adds grow FAISS's buffers (which may move them) between reads: every get stays right."""
    rng = np.random.default_rng(11)
    index = VectorIndex(DIM, ann)
    expected: dict[str, np.ndarray] = {}
    for step in range(900):
        name = f"n{int(rng.integers(0, 400)):04d}"
        if step % 5 == 4 and expected:
            gone = sorted(expected)[int(rng.integers(0, len(expected)))]
            index.remove(gone)
            del expected[gone]
        else:
            index.upsert(name, rng.normal(size=DIM))
            stored = index.get(name)
            assert stored is not None
            expected[name] = stored
        probe = sorted(expected)[int(rng.integers(0, len(expected)))]
        assert np.array_equal(index.get(probe), expected[probe])
    assert sorted(index.ids()) == sorted(expected)
    for name, vec in expected.items():
        assert np.array_equal(index.get(name), vec)


@pytest.mark.parametrize("ann", [AnnConfig(min_vectors=10**9), SMALL], ids=["exact", "ivf"])
def test_equal_scores_come_back_in_id_order_whatever_the_insertion_order(ann: AnnConfig) -> None:
    """Duplicate texts (equal vectors) must not reorder after a restart loads them anew."""
    base = clustered(300, seed=2)
    names = [f"n{row:05d}" for row in range(300)]
    twins = [f"dup{d}" for d in range(6)]
    forward, backward = VectorIndex(DIM, ann), VectorIndex(DIM, ann)
    for name, vec in zip(names, base, strict=True):
        forward.upsert(name, vec)
    for twin in twins:
        forward.upsert(twin, base[7])
    for twin in reversed(twins):
        backward.upsert(twin, base[7])
    for name, vec in reversed(list(zip(names, base, strict=True))):
        backward.upsert(name, vec)
    hits = forward.search(base[7], 4)
    assert [n for n, _ in hits] == ["dup0", "dup1", "dup2", "dup3"]
    assert hits == backward.search(base[7], 4)


@pytest.mark.parametrize("count", [150, 300])  # exact scan, inverted file
def test_get_many_returns_each_vector_and_marks_the_missing(count: int) -> None:
    index = filled(count)
    names = ["n00003", "missing", "n00120", CENTROID_PREFIX + "000000"]
    rows, present = index.get_many(names)
    assert present.tolist() == [True, False, True, index.approximate]
    for row, name in zip(rows, names, strict=True):
        single = index.get(name)
        assert np.array_equal(row, single if single is not None else np.zeros(DIM))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_vector_is_normalised_as_numpy_s_norm_divides_it(dtype: type) -> None:
    """Stored vectors and queries are the unit vectors ``vec / np.linalg.norm(vec)`` bit for
    bit (a store written before keeps its scores); a zero vector stays as it is."""
    rng = np.random.default_rng(7)
    for scale in (1e-3, 0.5, 1.0, 3.0, 250.0):
        vec = (scale * rng.normal(size=384)).astype(dtype)
        arr = vec.astype(np.float32)
        expected = (arr / float(np.linalg.norm(arr))).astype(np.float32)
        unit = normalize(vec)
        assert unit.dtype == np.float32
        assert np.array_equal(unit, expected)
        assert np.array_equal(normalize(unit), (unit / float(np.linalg.norm(unit))))
    assert not normalize(np.zeros(8, dtype=dtype)).any()
