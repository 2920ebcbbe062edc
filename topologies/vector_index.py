"""FAISS inner-product index over L2-normalised vectors, with string ids, removal and merging.

One :class:`VectorIndex` per (tenant, node kind). Changes are journaled the same way as the
graph's, so a rolled-back fold also restores the index.

Small indexes are exact (a flat scan). Once an index holds ``AnnConfig.min_vectors`` vectors it
switches to an inverted-file layout (IVF: vectors bucketed by their nearest centroid, a search
scans ``nprobe`` buckets), so a kNN search costs about the same at 100k vectors as at 10k. The
centroids are state like the vectors: they are trained inside the fold that crosses the
threshold (spherical k-means, fixed seed, input sorted by id), journaled, and persisted through
the same ChangeSet path as vectors under reserved ids (:data:`CENTROID_PREFIX`), so a restart or
a Kafka recovery rebuilds the very layout the uninterrupted run had and replays exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat

import faiss
import numpy as np
import numpy.typing as npt

from topologies.config import AnnConfig

Vector = npt.NDArray[np.float32]
Recorder = Callable[[Callable[[], None], str], None]

TIE_MARGIN = 4  # extra hits fetched so that equal scores at the k-th place sort by id
CENTROID_PREFIX = "~ivf:"  # ids of persisted IVF centroids; node ids never start with "~"


def use_single_thread() -> None:
    """One FAISS thread per process. A fold searches with one query at a time, where OpenMP
    threads only add synchronisation; on a busy 2-core machine they made a 10k-vector search
    5x slower (measured: 10.9 ms with the default threads, 1.9 ms with one)."""
    faiss.omp_set_num_threads(1)


def normalize(vec: npt.ArrayLike) -> Vector:
    """The unit vector along ``vec`` (float32; a zero vector as it is). The norm is
    ``np.linalg.norm``'s own arithmetic (the float32 root of the float32 dot product) without
    its checks: a fold normalises some thirty vectors an event."""
    arr = np.asarray(vec, dtype=np.float32).reshape(-1)
    norm = float(np.sqrt(arr.dot(arr)))
    return arr if norm == 0.0 else (arr / norm).astype(np.float32, copy=False)


def is_centroid_id(key: str) -> bool:
    return key.startswith(CENTROID_PREFIX)


class _Flat:
    """Exact scan. Slots are positions in the flat index: an update overwrites its slot in
    place and a removal moves the last vector into the freed slot, both O(dim)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.index = faiss.IndexFlatIP(dim)
        self.slot: dict[str, int] = {}
        self.at: list[str] = []
        self._view: Vector | None = None  # numpy view of FAISS's buffer; reset when it may move

    def __len__(self) -> int:
        return len(self.at)

    def names(self) -> list[str]:
        return list(self.at)

    def has(self, name: str) -> bool:
        return name in self.slot

    def get_many(self, names: Sequence[str]) -> tuple[Vector, npt.NDArray[np.bool_]]:
        slots = np.array([self.slot.get(name, -1) for name in names], dtype=np.int64)
        present = slots >= 0
        rows = np.zeros((len(names), self.dim), dtype=np.float32)
        if present.any():
            rows[present] = self._storage()[slots[present]]
        return rows, present

    def matrix(self) -> tuple[list[str], Vector]:
        return list(self.at), self._storage().copy()

    def get(self, name: str) -> Vector | None:
        slot = self.slot.get(name)
        return None if slot is None else self._storage()[slot].copy()

    def put(self, name: str, vec: Vector) -> None:
        slot = self.slot.get(name)
        if slot is None:
            self.slot[name] = len(self.at)
            self.at.append(name)
            self._view = None
            self.index.add(vec.reshape(1, -1))
        else:
            self._storage()[slot] = vec

    def drop(self, name: str) -> None:
        slot = self.slot.pop(name, None)
        if slot is None:
            return
        last = len(self.at) - 1
        storage = self._storage()
        if slot != last:
            moved = self.at[last]
            storage[slot] = storage[last]
            self.at[slot] = moved
            self.slot[moved] = slot
        self.at.pop()
        self._view = None
        self.index.remove_ids(faiss.IDSelectorRange(last, last + 1))

    def search(self, query: Vector, want: int) -> list[tuple[str, float]]:
        scores, labels = self.index.search(query, want)
        at = self.at
        return [
            (at[label], score)
            for score, label in zip(scores[0].tolist(), labels[0].tolist(), strict=True)
            if label >= 0
        ]

    def _storage(self) -> Vector:
        if self._view is None:
            total = int(self.index.ntotal)
            if total == 0:
                return np.zeros((0, self.dim), dtype=np.float32)
            flat = faiss.rev_swig_ptr(self.index.get_xb(), total * self.dim)
            self._view = np.asarray(flat).reshape(total, self.dim)
        return self._view


class _Inverted:
    """Approximate scan over an IVF index with a hashtable direct map: lookups by id,
    O(1) removal (swap within the bucket) and update by remove-then-add."""

    def __init__(self, centroids: Vector, nprobe: int) -> None:
        nlist, dim = centroids.shape
        self.centroids = centroids
        self.quantizer = faiss.IndexFlatIP(dim)
        self.quantizer.add(centroids)
        self.index = faiss.IndexIVFFlat(self.quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        self.index.is_trained = True
        self.index.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
        self.index.nprobe = min(nprobe, nlist)
        self.number: dict[str, int] = {}
        self.name: dict[int, str] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self.number)

    def names(self) -> list[str]:
        return list(self.number)

    def has(self, name: str) -> bool:
        return name in self.number

    def get_many(self, names: Sequence[str]) -> tuple[Vector, npt.NDArray[np.bool_]]:
        """As :meth:`_Flat.get_many`, the present rows read from the buckets in one call: the
        context assembly reads about 80 candidates' vectors per fold, 0.15 ms as a call per id
        at 12k vectors, 0.005 ms in one."""
        numbers = np.array([self.number.get(name, -1) for name in names], dtype=np.int64)
        present = numbers >= 0
        rows = np.zeros((len(names), self.index.d), dtype=np.float32)
        if present.any():
            rows[present] = self.index.reconstruct_batch(numbers[present])
        return rows, present

    def matrix(self) -> tuple[list[str], Vector]:
        names = list(self.number)
        rows, _ = self.get_many(names)
        return names, rows

    def get(self, name: str) -> Vector | None:
        number = self.number.get(name)
        return None if number is None else np.asarray(self.index.reconstruct(number))

    def put(self, name: str, vec: Vector) -> None:
        self.drop(name)
        number = self._next
        self._next += 1
        self.number[name] = number
        self.name[number] = name
        self.index.add_with_ids(vec.reshape(1, -1), np.array([number], dtype=np.int64))

    def put_many(self, names: list[str], matrix: Vector) -> None:
        numbers = np.arange(self._next, self._next + len(names), dtype=np.int64)
        self._next += len(names)
        for name, number in zip(names, numbers.tolist(), strict=True):
            self.number[name] = number
            self.name[number] = name
        if len(names):
            self.index.add_with_ids(matrix, numbers)

    def drop(self, name: str) -> None:
        number = self.number.pop(name, None)
        if number is None:
            return
        del self.name[number]
        self.index.remove_ids(faiss.IDSelectorArray(np.array([number], dtype=np.int64)))

    def search(self, query: Vector, want: int) -> list[tuple[str, float]]:
        scores, labels = self.index.search(query, want)
        return [
            (self.name[label], score)
            for score, label in zip(scores[0].tolist(), labels[0].tolist(), strict=True)
            if label >= 0
        ]


class VectorIndex:
    """Cosine kNN addressed by string ids: exact while small, IVF once large (see module)."""

    def __init__(self, dim: int, ann: AnnConfig | None = None) -> None:
        self.dim = dim
        self.ann = ann or AnnConfig()
        self._store: _Flat | _Inverted = _Flat(dim)
        self._loaded_centroids: dict[str, Vector] = {}
        self._recorder: Recorder | None = None

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and self._store.has(node_id)

    @property
    def approximate(self) -> bool:
        return isinstance(self._store, _Inverted)

    @property
    def lists(self) -> int:
        """Number of IVF buckets; 0 while the index is an exact scan."""
        return len(self._store.centroids) if isinstance(self._store, _Inverted) else 0

    def attach(self, recorder: Recorder | None) -> None:
        """Route undo steps (and the dirty id) to an open transaction; None detaches."""
        self._recorder = recorder

    def get(self, node_id: str) -> Vector | None:
        """A node's vector, or a centroid's for a :data:`CENTROID_PREFIX` id."""
        if is_centroid_id(node_id):
            return self._centroid(node_id)
        return self._store.get(node_id)

    def get_many(self, node_ids: Sequence[str]) -> tuple[Vector, npt.NDArray[np.bool_]]:
        """The vectors of ``node_ids`` as rows (zeros where a node has none) and which have
        one: one lookup for many nodes (the context assembly's candidates)."""
        if not any(map(str.startswith, node_ids, repeat(CENTROID_PREFIX))):  # is_centroid_id
            return self._store.get_many(node_ids)
        rows = np.zeros((len(node_ids), self.dim), dtype=np.float32)
        present = np.zeros(len(node_ids), dtype=bool)
        for i, node_id in enumerate(node_ids):
            vector = self.get(node_id)
            if vector is not None:
                rows[i], present[i] = vector, True
        return rows, present

    def ids(self) -> list[str]:
        return self._store.names()

    def centroid_ids(self) -> list[str]:
        """The reserved ids under which the IVF layout is persisted (none while exact)."""
        return [_centroid_key(row) for row in range(self.lists)]

    def upsert(self, node_id: str, vec: npt.ArrayLike) -> None:
        previous = self.get(node_id)
        self._store.put(node_id, normalize(vec))
        if self._recorder is not None:
            if previous is None:
                self._recorder(lambda: self._store.drop(node_id), node_id)
            else:
                self._recorder(lambda: self._store.put(node_id, previous), node_id)
        if previous is None:
            self.fit_layout()

    def load(self, node_id: str, vec: Vector) -> None:
        """Restore a stored vector bit for bit (no re-normalisation, no journal). Centroids
        are collected until :meth:`finish_load` rebuilds the stored layout."""
        arr = np.asarray(vec, dtype=np.float32).reshape(-1)
        if is_centroid_id(node_id):
            self._loaded_centroids[node_id] = arr
        else:
            self._store.put(node_id, arr)

    def finish_load(self) -> None:
        """Adopt the centroids read by :meth:`load`, if any."""
        if not self._loaded_centroids:
            return
        keys = sorted(self._loaded_centroids)
        centroids = np.stack([self._loaded_centroids[k] for k in keys]).astype(np.float32)
        self._loaded_centroids = {}
        self._relayout(centroids)

    def remove(self, node_id: str) -> None:
        previous = self.get(node_id)
        if previous is None:
            return
        self._store.drop(node_id)
        if self._recorder is not None:
            self._recorder(lambda: self._store.put(node_id, previous), node_id)

    def merge(
        self, keep: str, absorbed: str, keep_weight: float = 1.0, absorbed_weight: float = 1.0
    ) -> None:
        """The keeper's vector becomes the weighted mean of both; the absorbed id is removed."""
        a = self.get(keep)
        b = self.get(absorbed)
        if a is not None and b is not None:
            self.upsert(keep, keep_weight * a + absorbed_weight * b)
        elif b is not None:
            self.upsert(keep, b)
        self.remove(absorbed)

    def search(
        self, vec: npt.ArrayLike, k: int, exclude: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The k nearest ids with cosine similarity, best first; equal scores in id order.

        FAISS orders equal scores by storage position, which a restart (load order) changes;
        a few extra hits and a sort by (-score, id) keep ties, such as duplicate texts,
        in the same order before and after a restart."""
        if not len(self._store) or k <= 0:
            return []
        want = min(len(self._store), k + (len(exclude) if exclude else 0) + TIE_MARGIN)
        hits = self._store.search(normalize(vec).reshape(1, -1), want)
        if exclude:
            hits = [hit for hit in hits if hit[0] not in exclude]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    def similarity(self, a: str, b: str) -> float | None:
        va, vb = self.get(a), self.get(b)
        if va is None or vb is None:
            return None
        return float(np.dot(va, vb))

    # ------------------------------------------------------------------ layout
    def _centroid(self, key: str) -> Vector | None:
        if not isinstance(self._store, _Inverted):
            return None
        try:
            row = int(key[len(CENTROID_PREFIX) :])
        except ValueError:
            return None
        centroids = self._store.centroids
        return centroids[row].copy() if 0 <= row < len(centroids) else None

    def fit_layout(self) -> None:
        """Train (or retrain) the inverted file when the size calls for more buckets. Every new
        vector calls it; call it after a bulk load only to shape an index loaded without a
        stored layout (a store written before the layout existed trains at its next fold)."""
        wanted = self.ann.lists_for(len(self._store))
        if wanted > self.lists:
            self._set_layout(self._train(wanted))

    def drop_layout(self) -> None:
        """Back to the exact scan, the persisted centroids deleted (used by forget-tenant)."""
        if self.approximate:
            self._set_layout(None)

    def _set_layout(self, centroids: Vector | None) -> None:
        """Relayout, journaled: the undo restores the previous centroids, and every centroid
        id that changed is reported so the ChangeSet persists (or deletes) it."""
        before = self._store.centroids.copy() if isinstance(self._store, _Inverted) else None
        rows_before = self.lists
        self._relayout(centroids)
        if self._recorder is not None:
            self._recorder(lambda: self._relayout(before), _centroid_key(0))
            for row in range(1, max(rows_before, self.lists)):
                self._recorder(_nothing, _centroid_key(row))

    def _train(self, lists: int) -> Vector:
        names, matrix = self._store.matrix()
        order = np.argsort(np.array(names))  # order-free: a restart trains on the same input
        matrix = np.ascontiguousarray(matrix[order], dtype=np.float32)
        kmeans = faiss.Kmeans(
            self.dim,
            lists,
            niter=self.ann.train_iterations,
            seed=self.ann.seed,
            spherical=True,
            max_points_per_centroid=self.ann.train_points_per_list,
            min_points_per_centroid=1,  # the bucket count is ours (AnnConfig.lists_for)
            verbose=False,
        )
        kmeans.train(matrix)
        return np.ascontiguousarray(kmeans.centroids, dtype=np.float32)

    def _relayout(self, centroids: Vector | None) -> None:
        """Move every vector into a layout with these centroids (None: the exact scan)."""
        names, matrix = self._store.matrix()
        if centroids is None:
            flat = _Flat(self.dim)
            for name, row in zip(names, matrix, strict=True):
                flat.put(name, row)
            self._store = flat
        else:
            inverted = _Inverted(centroids, self.ann.nprobe)
            inverted.put_many(names, matrix)
            self._store = inverted


def _centroid_key(row: int) -> str:
    return f"{CENTROID_PREFIX}{row:06d}"


def _nothing() -> None:
    """Undo step of a centroid whose restore is done by the first centroid's step."""
