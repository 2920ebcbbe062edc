"""Embeddings of recent texts, computed in as few model calls as possible.

A batched fold knows most of the texts it will embed before it folds anything (each event's
text, the statements its fact step reads, their topic phrases): ``prefetch`` embeds them in one
call, and the fold's steps, which ask for one or two texts at a time, find them here. A model
such as MiniLM costs per call far more than per text, so one call for a batch is most of what a
batched fold saves. Each text's vector does not depend on the call it came from (batch and
single embeddings are identical), so a fold gives the same result with or without a prefetch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from topologies.embedding import Embedder, Matrix


class EmbeddingMemo:
    """An :class:`Embedder` that remembers the vectors of the latest ``size`` texts.

    Safe to share between the fold (maybe in a worker thread) and the read path: the map is
    guarded by a lock that is never held during a model call."""

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner = inner
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.calls = 0  # model calls made (for benchmarks)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the texts not remembered yet, in one call."""
        self._vectors_of(texts)

    def __len__(self) -> int:
        return len(self._vectors)

    def forget(self) -> None:
        """Drop every remembered text (the engine does after each batch: event texts do not
        outlive the fold that read them)."""
        with self._lock:
            self._vectors.clear()

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found = self._vectors_of(texts)
        return np.vstack([found[text] for text in texts]).astype(np.float32)

    def _vectors_of(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                row = self._vectors.get(text)
                if row is not None:
                    self._vectors.move_to_end(text)
                    found[text] = row
        missing = sorted((t for t in dict.fromkeys(texts) if t not in found), key=len)
        if not missing:  # shortest first: a model pads each of its batches less
            return found
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
        found.update(fresh)
        with self._lock:
            self.calls += 1
            self._vectors.update(fresh)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return found
