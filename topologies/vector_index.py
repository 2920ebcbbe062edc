"""FAISS inner-product index over L2-normalised vectors, with string ids, removal and merging.

One :class:`VectorIndex` per (tenant, node kind). Changes are journaled the same way as the
graph's, so a rolled-back fold also restores the index.
"""

from __future__ import annotations

from collections.abc import Callable

import faiss
import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def use_single_thread() -> None:
    """One FAISS thread per process. A fold searches with one query at a time, where OpenMP
    threads only add synchronisation; on a busy 2-core machine they made a 10k-vector search
    5x slower (measured: 10.9 ms with the default threads, 1.9 ms with one)."""
    faiss.omp_set_num_threads(1)


def normalize(vec: npt.ArrayLike) -> Vector:
    arr = np.asarray(vec, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(arr))
    return arr if norm == 0.0 else (arr / norm).astype(np.float32)


class VectorIndex:
    """Exact cosine kNN over a FAISS IndexFlatIP addressed by string ids.

    Slots are positions in the flat index: an update overwrites its slot in place and a
    removal moves the last vector into the freed slot, so both cost O(dim), not O(size).
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._index = faiss.IndexFlatIP(dim)
        self._slot: dict[str, int] = {}
        self._at: list[str] = []
        self._recorder: Callable[[Callable[[], None], str], None] | None = None

    def __len__(self) -> int:
        return len(self._at)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._slot

    def attach(self, recorder: Callable[[Callable[[], None], str], None] | None) -> None:
        """Route undo steps (and the dirty id) to an open transaction; None detaches."""
        self._recorder = recorder

    def get(self, node_id: str) -> Vector | None:
        slot = self._slot.get(node_id)
        return None if slot is None else self._storage()[slot].copy()

    def ids(self) -> list[str]:
        return list(self._at)

    def upsert(self, node_id: str, vec: npt.ArrayLike) -> None:
        previous = self.get(node_id)
        self._put(node_id, normalize(vec))
        if self._recorder is not None:
            if previous is None:
                self._recorder(lambda: self._drop(node_id), node_id)
            else:
                self._recorder(lambda: self._put(node_id, previous), node_id)

    def load(self, node_id: str, vec: Vector) -> None:
        """Restore a stored vector bit for bit (no re-normalisation, no journal)."""
        self._put(node_id, np.asarray(vec, dtype=np.float32).reshape(-1))

    def remove(self, node_id: str) -> None:
        previous = self.get(node_id)
        if previous is None:
            return
        self._drop(node_id)
        if self._recorder is not None:
            self._recorder(lambda: self._put(node_id, previous), node_id)

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
        """The k nearest ids with cosine similarity, best first."""
        if not self._at or k <= 0:
            return []
        want = min(len(self._at), k + (len(exclude) if exclude else 0))
        query = normalize(vec).reshape(1, -1)
        scores, labels = self._index.search(query, want)
        found: list[tuple[str, float]] = []
        for score, label in zip(scores[0], labels[0], strict=True):
            if label < 0:
                continue
            name = self._at[int(label)]
            if exclude and name in exclude:
                continue
            found.append((name, float(score)))
            if len(found) >= k:
                break
        return found

    def similarity(self, a: str, b: str) -> float | None:
        va, vb = self.get(a), self.get(b)
        if va is None or vb is None:
            return None
        return float(np.dot(va, vb))

    def _storage(self) -> Vector:
        total = int(self._index.ntotal)
        if total == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        flat = faiss.rev_swig_ptr(self._index.get_xb(), total * self.dim)
        return np.asarray(flat).reshape(total, self.dim)

    def _put(self, node_id: str, vec: Vector) -> None:
        slot = self._slot.get(node_id)
        if slot is None:
            self._slot[node_id] = len(self._at)
            self._at.append(node_id)
            self._index.add(vec.reshape(1, -1))
        else:
            self._storage()[slot] = vec

    def _drop(self, node_id: str) -> None:
        slot = self._slot.pop(node_id, None)
        if slot is None:
            return
        last = len(self._at) - 1
        storage = self._storage()
        if slot != last:
            moved = self._at[last]
            storage[slot] = storage[last]
            self._at[slot] = moved
            self._slot[moved] = slot
        self._at.pop()
        self._index.remove_ids(faiss.IDSelectorRange(last, last + 1))
