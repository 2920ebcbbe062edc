"""Retrieval: the ranked lists of a query, fused by reciprocal rank fusion.

- BM25 (FTS5) over node texts, on the query without the names that are everywhere (a person
  in every event of a chat, the user's own name): such a name does not tell events apart
  lexically; it anchors the query instead (:mod:`topologies.read.entities`).
- Dense kNN over every embedded kind.
- A time-anchored sub-query (hybrid mode): when the query names a period ("last week", "in
  May 2023"), the same BM25 query over the events and facts of that period (and the time
  after it in which people tell of it).
- Pseudo-relevance feedback (hybrid mode, Rocchio): the first fused hits' centroid pulls the
  query vector towards the texts that answered it; a second dense search over events and
  facts finds their kin.

``bm25`` and ``dense`` modes are the plain baselines: one list, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

import numpy as np

from schemas.graph import Node, NodeKind
from schemas.query import QueryRequest
from topologies.config import ReadConfig
from topologies.entities import EntityIndex
from topologies.memory import EMBEDDED_KINDS, TenantMemory
from topologies.read.fusion import rrf
from topologies.read.lexical import LexicalIndex
from topologies.vector_index import Vector

Ranked = list[tuple[str, float]]
ANCHORED_KINDS = frozenset({NodeKind.EVENT, NodeKind.FACT})  # what names and periods anchor
FEEDBACK_KINDS = (NodeKind.EVENT, NodeKind.FACT)  # the kin of the first hits' texts


@dataclass
class Retrieval:
    lexical: Ranked = field(default_factory=list)
    dense: Ranked = field(default_factory=list)
    timed: Ranked = field(default_factory=list)
    feedback: Ranked = field(default_factory=list)
    fused: dict[str, float] = field(default_factory=dict)
    qvec: Vector | None = None

    @cached_property
    def lexical_rank(self) -> dict[str, tuple[int, float]]:
        """node id -> (1-based BM25 rank, BM25 score)."""
        return {n: (i + 1, s) for i, (n, s) in enumerate(self.lexical)}

    @cached_property
    def dense_rank(self) -> dict[str, tuple[int, float]]:
        """node id -> (1-based dense rank, cosine)."""
        return {n: (i + 1, s) for i, (n, s) in enumerate(self.dense)}


def retrieve(
    memory: TenantMemory,
    lexical_index: LexicalIndex,
    embed: Callable[[str], Vector],
    request: QueryRequest,
    cfg: ReadConfig,
    common: list[str],
    spans: list[tuple[datetime, datetime]],
    keep: Callable[[Node], bool] | None,
) -> Retrieval:
    """The query's ranked lists and their fusion; ``keep`` is the request's time filter."""
    raw = memory.graph.g._node
    out = Retrieval()
    filtered = keep is not None

    def ok(node_id: str) -> bool:
        data = raw.get(node_id)
        return data is not None and (keep is None or keep(data["n"]))

    hybrid = request.mode == "hybrid"
    text = without_names(request.text, common) if hybrid else request.text
    total = sum(len(memory.index(kind)) for kind in EMBEDDED_KINDS)
    if request.mode in ("hybrid", "bm25"):
        out.lexical = fetch(
            lambda n: lexical_index.search(text, n),
            ok,
            cfg.candidates,
            len(lexical_index),
            filtered,
        )
    if request.mode in ("hybrid", "dense"):
        qvec = embed(request.text)
        out.qvec = qvec
        dense = fetch(lambda n: dense_search(memory, qvec, n), ok, cfg.candidates, total, filtered)
        out.dense = [(n, c) for n, c in dense if c >= cfg.dense_min_cosine]
    if hybrid and spans and cfg.time_weight > 0.0:
        out.timed = fetch(
            lambda n: lexical_index.search(text, n, ANCHORED_KINDS, spans),
            ok,
            cfg.candidates,
            len(lexical_index),
            filtered,
        )
    weights = {
        "bm25": cfg.bm25_weight,
        "dense": cfg.dense_weight,
        "timed": cfg.time_weight,
        "feedback": cfg.feedback_weight,
    }
    out.fused = rrf(_lists(out), weights, cfg.rrf_k)
    if hybrid and out.qvec is not None and cfg.feedback_weight > 0.0 and out.fused:
        first = sorted(out.fused, key=lambda n: (-out.fused[n], n))[: cfg.feedback_hits]
        vecs = [v for v in (memory.vector(n) for n in first) if v is not None]
        if vecs:
            moved = out.qvec + np.mean(vecs, axis=0)
            moved = (moved / (np.linalg.norm(moved) or 1.0)).astype(np.float32)
            feedback = fetch(
                lambda n: dense_search(memory, moved, n, FEEDBACK_KINDS),
                ok,
                cfg.candidates,
                total,
                filtered,
            )
            out.feedback = [(n, c) for n, c in feedback if c >= cfg.dense_min_cosine]
            out.fused = rrf(_lists(out), weights, cfg.rrf_k)
    return out


def _lists(out: Retrieval) -> dict[str, Ranked]:
    return {"bm25": out.lexical, "dense": out.dense, "timed": out.timed, "feedback": out.feedback}


def common_names(index: EntityIndex, names: frozenset[str], limit: int) -> list[str]:
    """Names of the query found in more than ``limit`` events (see the module docstring)."""
    return sorted(
        n
        for n in names
        if len(index.postings(f"name:{n}")) > limit or len(index.postings(f"person:{n}")) > limit
    )


def without_names(text: str, names: list[str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")(['’]s)?\b", re.I)
    return pattern.sub(" ", text)


def fetch(
    search: Callable[[int], Ranked],
    keep: Callable[[str], bool],
    want: int,
    total: int,
    filtered: bool,
) -> Ranked:
    """Search, dropping filtered-out hits; widen the search until ``want`` survive."""
    size = want
    while True:
        hits = search(size)
        if not filtered:
            return hits
        kept = [(n, s) for n, s in hits if keep(n)]
        if len(kept) >= want or size >= total or len(hits) < size:
            return kept[:want]
        size *= 4


def dense_search(
    memory: TenantMemory, vec: Vector, k: int, kinds: Iterable[NodeKind] = EMBEDDED_KINDS
) -> Ranked:
    hits: Ranked = []
    for kind in kinds:
        hits.extend(memory.index(kind).search(vec, k))
    hits.sort(key=lambda item: -item[1])
    return hits[:k]
