"""Embeddings of recent texts, computed in as few model calls as possible.

A batched fold knows most of the texts it will embed before it folds anything (each event's
text, the statements its fact step reads, their topic phrases): ``prefetch`` embeds them in one
call, and the fold's steps, which ask for one or two texts at a time, find them here. A model
such as MiniLM costs per call far more than per text, so one call for a batch is most of what a
batched fold saves. Each text's vector does not depend on the call it came from (batch and
single embeddings are identical), so a fold gives the same result with or without a prefetch.

Two kinds of text are remembered. The texts of the events being folded (``prefetch``,
``embed_transient``: an event's text, its body, its statements) belong to that fold and are
dropped by ``forget`` when it ends: event texts do not outlive the fold that read them. The
texts the fold's steps ask for on demand (``embed``: concept labels, candidate phrases,
intent titles and descriptions) recur from one fold to the next (a relabel checks the old
label against the new one, an intent's deadline returns to an earlier date): up to
``kept_size`` of them, each at most ``kept_chars`` long, outlive ``forget``; ``clear`` drops
them too (a deletion does, so no text quoting a deleted event stays).

A batch can also be embedded ahead (``embed_ahead``): while one batch of a tenant folds on the
fold's thread, the memo's own worker thread embeds the texts of the tenant's next batch (a
model such as MiniLM releases the GIL, so on two cores the two overlap). The vectors wait
beside the memo, not in it, until that batch starts and ``take_ahead`` hands them over; at
most one batch ahead per tenant, one embedding at a time, and ``clear`` drops them too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from topologies.embedding import Embedder, Matrix

KEPT_SIZE = 2048  # on-demand texts kept across folds (a vector of 384 floats is 1.5 KB)
KEPT_CHARS = 1024  # longer on-demand texts live until the fold ends, as event texts do


class EmbeddingMemo:
    """An :class:`Embedder` that remembers the vectors of the fold's texts (the latest
    ``size``) and of up to ``kept_size`` short texts asked for on demand.

    Safe to share between the fold (maybe in a worker thread) and the read path: the maps are
    guarded by a lock that is never held during a model call."""

    def __init__(
        self,
        inner: Embedder,
        size: int = 4096,
        kept_size: int = KEPT_SIZE,
        kept_chars: int = KEPT_CHARS,
    ) -> None:
        self.inner = inner
        self.size = size
        self.kept_size = kept_size
        self.kept_chars = kept_chars
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # this fold's texts
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()  # on-demand, across folds
        self._ahead: dict[str, Future[dict[str, np.ndarray]]] = {}  # a tenant's next batch
        self._worker: ThreadPoolExecutor | None = None  # embeds ahead, started on first use
        self._lock = threading.Lock()
        self.calls = 0  # model calls made (for benchmarks)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the fold's texts not remembered yet, in one call (dropped by ``forget``)."""
        self._vectors_of(texts, transient=True)

    def embed_transient(self, texts: Sequence[str]) -> Matrix:
        """``embed`` for texts of the events being folded: remembered until ``forget``."""
        return self._matrix(texts, transient=True)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """The texts' vectors; those embedded here (not the fold's own) may outlive it."""
        return self._matrix(texts, transient=False)

    def __len__(self) -> int:
        return len(self._vectors) + len(self._kept)

    def kept(self) -> list[str]:
        """The texts that outlive ``forget``, oldest first."""
        with self._lock:
            return list(self._kept)

    def forget(self) -> None:
        """Drop the fold's texts (the engine does when a fold or batch ends: event texts do
        not outlive the fold that read them); the short texts asked for on demand stay."""
        with self._lock:
            self._vectors.clear()

    def clear(self) -> None:
        """Drop every remembered text, kept ones too, and the batches embedded ahead (after
        a deletion)."""
        with self._lock:
            self._vectors.clear()
            self._kept.clear()
            self._ahead.clear()

    def embed_ahead(self, key: str, texts: Sequence[str]) -> None:
        """Start embedding, in the memo's worker thread, the texts of the batch that will
        fold after the one folding now (``key``: its tenant). ``take_ahead`` hands the
        vectors over when that batch starts; a newer call for the same key replaces this
        one (one batch ahead). The texts kept across folds are not embedded again."""
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="embed-ahead")
            replaced = self._ahead.get(key)
            if replaced is not None:
                replaced.cancel()  # not started yet: its batch is not the next one any more
            self._ahead[key] = self._worker.submit(self._embed_unkept, list(texts))

    def take_ahead(self, key: str) -> Future[dict[str, np.ndarray]] | None:
        """The embedding started ahead for ``key``'s batch, handed over once (None: none)."""
        with self._lock:
            return self._ahead.pop(key, None)

    def adopt(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Remember vectors embedded ahead as the texts of the fold starting now (``forget``
        drops them when it ends)."""
        with self._lock:
            for text, row in vectors.items():
                if self._recall(text) is None:
                    self._remember(text, row, transient=True)

    def _embed_unkept(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The texts' vectors, but for those kept across folds (the worker's task)."""
        with self._lock:
            missing = sorted((t for t in dict.fromkeys(texts) if t not in self._kept), key=len)
        if not missing:
            return {}
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
        with self._lock:
            self.calls += 1
        return fresh

    def _matrix(self, texts: Sequence[str], transient: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found = self._vectors_of(texts, transient)
        return np.vstack([found[text] for text in texts]).astype(np.float32)

    def _vectors_of(self, texts: Sequence[str], transient: bool) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            found = {text: row for text in wanted if (row := self._recall(text)) is not None}
        missing = sorted((t for t in wanted if t not in found), key=len)
        if not missing:  # shortest first: a model pads each of its batches less
            return found
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
        found.update(fresh)
        with self._lock:
            self.calls += 1
            for text, row in fresh.items():
                self._remember(text, row, transient)
        return found

    def _recall(self, text: str) -> np.ndarray | None:
        """The remembered vector of ``text``, now the most recent of its map (lock held)."""
        for memory in (self._vectors, self._kept):
            row = memory.get(text)
            if row is not None:
                memory.move_to_end(text)
                return row
        return None

    def _remember(self, text: str, row: np.ndarray, transient: bool) -> None:
        """Keep a fresh vector: a short text asked for on demand across folds, any other
        until the fold ends (lock held)."""
        if transient or len(text) > self.kept_chars:
            memory, size = self._vectors, self.size
        else:
            memory, size = self._kept, self.kept_size
        memory[text] = row
        while len(memory) > size:
            memory.popitem(last=False)


def embed_event_texts(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    """Vectors of texts taken from the events being folded (their statements): remembered by a
    memo only until its fold ends, whichever fold or tenant asked for them first."""
    if isinstance(embedder, EmbeddingMemo):
        return embedder.embed_transient(texts)
    return embedder.embed(texts)
