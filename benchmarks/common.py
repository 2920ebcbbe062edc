"""Shared helpers of the read-path benchmarks: data dir, machine line, caching embedder."""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import structlog

from topologies.embedding import (
    Embedder,
    Matrix,
    Span,
    SpanVectors,
    embed_with_spans,
    reads_spans,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "data"
EMBED_CACHE = Path.home() / ".cache" / "foldmem-bench"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


class CachingEmbedder:
    """Wraps an embedder and memoises texts (the benchmarks embed each question once)."""

    def __init__(self, inner: Embedder, disk: Path | None = None) -> None:
        self.inner = inner
        self._cache: dict[str, np.ndarray] = {}
        self._spans: dict[tuple[str, int, int], np.ndarray | None] = {}
        self._disk = disk / f"{inner.model_id}.npz" if disk is not None else None
        if self._disk is not None and self._disk.exists():
            data = np.load(self._disk, allow_pickle=False)
            self._cache = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def save(self) -> None:
        """Keep the vectors for the next run (outside the repository)."""
        if self._disk is None or not self._cache:
            return
        self._disk.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._cache)
        vectors = np.vstack([self._cache[t] for t in texts])
        partial = self._disk.with_name(f"{self._disk.stem}.{os.getpid()}.tmp.npz")
        np.savez(partial, texts=np.array(texts), vectors=vectors)
        partial.replace(self._disk)  # atomic: a concurrent run never reads half a file

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self._cache[text] = row
        return (
            np.vstack([self._cache[t] for t in texts]).astype(np.float32)
            if texts
            else np.zeros((0, self.dim), dtype=np.float32)
        )

    @property
    def reads_spans(self) -> bool:
        return reads_spans(self.inner)

    def embed_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]]
    ) -> tuple[Matrix, SpanVectors]:
        """The inner embedder's texts and spans from one pass where it can (late chunking);
        the texts' vectors are remembered, a span's (its text's context) only for this run."""
        pairs = zip(texts, spans, strict=True)
        key = [tuple((text, *span) for span in wanted) for text, wanted in pairs]
        todo = [i for i, keys in enumerate(key) if any(k not in self._spans for k in keys)]
        if todo:
            matrix, rows = embed_with_spans(
                self.inner, [texts[i] for i in todo], [spans[i] for i in todo]
            )
            for index, row, read in zip(todo, matrix, rows, strict=True):
                self._cache[texts[index]] = row
                self._spans.update(zip(key[index], read, strict=True))
        return self.embed(texts), [[self._spans[k] for k in keys] for keys in key]

    def warm(self, texts: Sequence[str]) -> None:
        self.embed(list(texts))


def quiet_logs(level: int = logging.WARNING) -> None:
    """Benchmarks print their tables; structlog's debug lines would drown them."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(level))
