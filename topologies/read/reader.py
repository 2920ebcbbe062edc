"""The read path's entry points: :meth:`Reader.query` (never writes) and :meth:`Reader.recall`
(a write: it records the recall in a transaction and returns the ChangeSet to persist).

Pipeline of a query: BM25 (FTS5) and dense kNN (FAISS, every embedded kind) -> reciprocal rank
fusion -> graph expansion (BFS with per-hop decay + personalized PageRank, bounded) ->
surfacing of concepts / intents whose evidence matched -> filters (kinds, time) -> supersedes
chains and event citations. No LLM is involved at any step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import structlog

from schemas.graph import Node, NodeKind
from schemas.query import (
    ChainLink,
    Explanation,
    QueryHit,
    QueryRequest,
    QueryResponse,
    RecallHit,
    RecallRequest,
    RecallResponse,
)
from topologies.embedding import Embedder
from topologies.memory import EMBEDDED_KINDS, ChangeSet, TenantMemory
from topologies.read.chains import chain_for_hit
from topologies.read.config import ReadConfig
from topologies.read.evidence import SURFACED_KINDS, event_ids, supported
from topologies.read.expansion import Expansion, expand
from topologies.read.filters import kinds_filter, time_filter
from topologies.read.fusion import rrf
from topologies.read.lexical import INDEXED_KINDS, LexicalIndex
from topologies.read.recall_model import RECALL_ATTR, RecallState, days_between, recall_probability
from topologies.read.timeline import Timeline
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

CLOCK_KEY = "clock"  # the engine's stream clock (topologies.engine.CLOCK_KEY)


@dataclass
class _TenantState:
    lexical: LexicalIndex
    timeline: Timeline
    memory_id: int = 0


def stream_now(memory: TenantMemory) -> datetime:
    clock = memory.meta.get(CLOCK_KEY)
    if clock:
        return datetime.fromisoformat(str(clock))
    latest = max((n.ts for n in memory.graph.nodes(NodeKind.EVENT) if n.ts), default=None)
    return latest or datetime.now(UTC)


class Reader:
    """Holds the per-tenant lexical index and timeline; stateless otherwise."""

    def __init__(self, embedder: Embedder, config: ReadConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or ReadConfig()
        self._states: dict[str, _TenantState] = {}

    # ------------------------------------------------------------ index upkeep
    def build(self, memory: TenantMemory) -> None:
        """(Re)build the tenant's lexical index and timeline, e.g. after a load."""
        state = self._states.get(memory.tenant)
        if state is None:
            state = _TenantState(LexicalIndex(memory.tenant), Timeline())
            self._states[memory.tenant] = state
        state.memory_id = id(memory)
        state.lexical.build(memory)
        state.timeline.build(memory)

    def apply(self, changes: ChangeSet) -> None:
        """Follow a committed ChangeSet (call after every commit; cheap when unrelated)."""
        state = self._states.get(changes.tenant)
        if state is None:
            return  # built lazily on first query
        state.lexical.apply(changes)
        state.timeline.apply(changes)

    def forget(self, tenant: str) -> None:
        state = self._states.pop(tenant, None)
        if state is not None:
            state.lexical.close()

    def _state(self, memory: TenantMemory) -> _TenantState:
        """The tenant's read state: built on first use or for a reloaded memory; otherwise
        nodes added or removed since (without :meth:`apply`) are synced by id difference."""
        state = self._states.get(memory.tenant)
        if state is None or state.memory_id != id(memory):
            self.build(memory)
            return self._states[memory.tenant]
        indexed = sum(memory.graph.count(kind) for kind in INDEXED_KINDS)
        if len(state.lexical) != indexed or len(state.timeline) != memory.graph.count(
            NodeKind.EVENT
        ):
            synced = state.lexical.sync(memory)
            state.timeline.sync(memory)
            log.debug("read_index_synced", tenant=memory.tenant, docs=synced)
        return state

    # ------------------------------------------------------------------ query
    def query(self, memory: TenantMemory, request: QueryRequest) -> QueryResponse:
        started = time.perf_counter()
        cfg = self.config
        graph = memory.graph
        state = self._state(memory)
        now = stream_now(memory)
        kinds = kinds_filter(request.kinds)
        in_time = time_filter(request.as_of, request.between)
        filtered = request.as_of is not None or request.between is not None

        raw = graph.g._node  # node id -> {"n": Node}; the hot loops skip alias resolution

        def time_ok(node_id: str) -> bool:
            data = raw.get(node_id)
            return data is not None and in_time(data["n"])

        # 1. retrieval
        lexical: list[tuple[str, float]] = []
        dense: list[tuple[str, float]] = []
        qvec: Vector | None = None
        if request.mode in ("hybrid", "bm25"):
            lexical = _fetch(
                lambda n: state.lexical.search(request.text, n),
                time_ok,
                cfg.candidates,
                len(state.lexical),
                filtered,
            )
        if request.mode in ("hybrid", "dense"):
            qvec = self.embedder.embed([request.text])[0]
            vec = qvec
            total = sum(len(memory.index(kind)) for kind in EMBEDDED_KINDS)
            dense = _fetch(
                lambda n: _dense(memory, vec, n), time_ok, cfg.candidates, total, filtered
            )
            dense = [(n, c) for n, c in dense if c >= cfg.dense_min_cosine]
        weights = {"bm25": cfg.bm25_weight, "dense": cfg.dense_weight}
        fused = rrf({"bm25": lexical, "dense": dense}, weights, cfg.rrf_k)
        # strength of a direct hit from its fused rank: RRF scores are too flat to propagate
        ordered = sorted(fused, key=lambda n: (-fused[n], n))
        base = {n: 1.0 / (1.0 + i * cfg.rank_decay) for i, n in enumerate(ordered)}

        # 2. expansion and surfacing
        seeds = {n: base[n] for n in ordered[: cfg.seeds]}
        expansion = Expansion()
        if request.expand and seeds:
            expansion = expand(
                graph, state.timeline, seeds, cfg, now, time_ok if filtered else None
            )
        surfaced: dict[str, list[float]] = {}
        if request.surface:
            for seed, value in seeds.items():
                for target in supported(graph, seed):
                    target_node = graph.get(target)
                    if target_node is not None and target_node.kind in SURFACED_KINDS:
                        surfaced.setdefault(target, []).append(value)

        # 3. scoring
        candidates = set(base) | set(expansion.received) | set(surfaced)
        scored: list[tuple[float, str, float]] = []
        for node_id in candidates:
            data = raw.get(node_id)
            if data is None:
                continue
            node = data["n"]
            if node.kind not in kinds or (filtered and not in_time(node)):
                continue
            support = surfaced.get(node_id)
            surface = cfg.surface_weight * sum(support) / (1.0 + sum(support)) if support else 0.0
            score = (
                base.get(node_id, 0.0)
                + cfg.expansion_weight * expansion.received.get(node_id, 0.0)
                + cfg.pagerank_weight * expansion.pagerank.get(node_id, 0.0)
                + surface
            )
            scored.append((score, node_id, surface))
        scored.sort(key=lambda item: (-item[0], item[1]))
        score_of = {node_id: score for score, node_id, _ in scored}
        bm25_rank = {n: i + 1 for i, (n, _) in enumerate(lexical)}
        bm25_score = dict(lexical)
        dense_rank = {n: i + 1 for i, (n, _) in enumerate(dense)}
        dense_cos = dict(dense)

        def explain(node_id: str, surface: float) -> Explanation:
            return Explanation(
                bm25_rank=bm25_rank.get(node_id),
                bm25_score=_round(bm25_score.get(node_id)),
                dense_rank=dense_rank.get(node_id),
                dense_cosine=_round(dense_cos.get(node_id)),
                rrf=round(fused.get(node_id, 0.0), 6),
                expansion=round(expansion.received.get(node_id, 0.0), 6),
                hops=0 if node_id in base else expansion.hops.get(node_id),
                via=expansion.via.get(node_id),
                pagerank=round(expansion.pagerank.get(node_id, 0.0), 6),
                surfaced_by=len(surfaced.get(node_id, ())),
                surface=round(surface, 6),
            )

        # 4. results: whole chains, citations, recall p
        items: list[QueryHit] = []
        in_chain: set[str] = set()
        for score, node_id, surface in scored:
            if len(items) >= request.k:
                break
            if node_id in in_chain:
                continue
            node = graph.node(node_id)
            explanation = explain(node_id, surface)
            chain: list[ChainLink] | None = None
            arc = chain_for_hit(graph, node) if request.chains else []
            if arc and node.kind == NodeKind.EVENT and in_chain.intersection(n.id for n in arc):
                arc = []  # the chain is already in the answer: the event stays a plain hit
            if arc:
                if request.as_of is not None:
                    cutoff = request.as_of
                    arc = [n for n in arc if (n.valid_from or n.ts or n.created_at) <= cutoff]
                in_chain.update(n.id for n in arc)
                chain = [
                    _link(n, i == len(arc) - 1 and n.superseded_by is None)
                    for i, n in enumerate(arc)
                ]
            if qvec is not None:
                explanation.recall_p = _recall_p(memory, node, qvec, now, cfg.recall_g0)
            items.append(
                QueryHit(
                    node_id=node.id,
                    kind=node.kind,
                    title=node.title,
                    text=node.text,
                    score=round(score, 6),
                    ts=node.ts,
                    explanation=explanation,
                    event_ids=event_ids(
                        graph, node, request.max_event_ids, cfg.evidence_depth, prefer=score_of
                    ),
                    chain=chain,
                )
            )
        took = (time.perf_counter() - started) * 1000.0
        log.debug(
            "query",
            tenant=memory.tenant,
            k=request.k,
            hits=len(items),
            lexical=len(lexical),
            dense=len(dense),
            subgraph=expansion.subgraph,
            took_ms=round(took, 2),
        )
        return QueryResponse(tenant=memory.tenant, text=request.text, items=items, took_ms=took)

    # ----------------------------------------------------------------- recall
    def recall(
        self, memory: TenantMemory, request: RecallRequest
    ) -> tuple[RecallResponse, ChangeSet]:
        """Cued recall: memories with p >= threshold; their recall history is updated in one
        transaction whose ChangeSet the caller persists (and hands to :meth:`apply`)."""
        cfg = self.config
        now = request.now or stream_now(memory)
        kinds = kinds_filter(request.kinds)
        qvec = self.embedder.embed([request.text])[0]
        found: list[tuple[float, Node, float, float, RecallState]] = []
        for node_id, cosine in _dense(memory, qvec, request.candidates):
            node = memory.graph.get(node_id)
            if node is None or node.kind not in kinds:
                continue
            encoded = node.ts or node.created_at
            if encoded > now:
                continue
            history = RecallState.from_attrs(node.attrs, cfg.recall_g0)
            last = history.last(encoded) or encoded
            elapsed = days_between(last, now)
            p = recall_probability(cosine, elapsed, history.g)
            if p >= request.threshold:
                found.append((p, node, cosine, elapsed, history))
        found.sort(key=lambda item: (-item[0], item[1].id))
        found = found[: request.limit]
        items: list[RecallHit] = []
        memory.begin()
        try:
            for p, node, cosine, elapsed, history in found:
                after = history.recalled(now, node.ts or node.created_at, cfg.recall_history)
                memory.graph.replace_node(
                    node.model_copy(update={"attrs": {**node.attrs, RECALL_ATTR: after.to_attrs()}})
                )
                items.append(
                    RecallHit(
                        node_id=node.id,
                        kind=node.kind,
                        title=node.title,
                        text=node.text,
                        p=round(p, 6),
                        relevance=round(cosine, 6),
                        elapsed_days=round(elapsed, 6),
                        consolidation=round(after.g, 6),
                        recalls=after.n,
                        event_ids=event_ids(memory.graph, node, 20),
                    )
                )
        except BaseException:
            memory.rollback()
            raise
        changes = memory.commit()
        self.apply(changes)
        log.info("recall", tenant=memory.tenant, recalled=len(items), threshold=request.threshold)
        response = RecallResponse(
            tenant=memory.tenant,
            text=request.text,
            threshold=request.threshold,
            now=now,
            items=items,
        )
        return response, changes


def _fetch(
    search: Callable[[int], list[tuple[str, float]]],
    keep: Callable[[str], bool],
    want: int,
    total: int,
    filtered: bool,
) -> list[tuple[str, float]]:
    """Search, dropping filtered-out hits; widen the search until ``want`` survive."""
    fetch = want
    while True:
        hits = search(fetch)
        if not filtered:
            return hits
        kept = [(n, s) for n, s in hits if keep(n)]
        if len(kept) >= want or fetch >= total or len(hits) < fetch:
            return kept[:want]
        fetch *= 4


def _dense(memory: TenantMemory, vec: Vector, k: int) -> list[tuple[str, float]]:
    hits: list[tuple[str, float]] = []
    for kind in EMBEDDED_KINDS:
        hits.extend(memory.index(kind).search(vec, k))
    hits.sort(key=lambda item: -item[1])
    return hits[:k]


def _recall_p(memory: TenantMemory, node: Node, qvec: Vector, now: datetime, g0: float) -> float:
    vec = memory.vector(node.id)
    if vec is None:
        return 0.0
    encoded = node.ts or node.created_at
    history = RecallState.from_attrs(node.attrs, g0)
    last = history.last(encoded) or encoded
    cosine = float(np.dot(vec, qvec))
    return round(recall_probability(cosine, days_between(last, now), history.g), 6)


def _link(node: Node, current: bool) -> ChainLink:
    return ChainLink(
        node_id=node.id,
        kind=node.kind,
        text=node.embed_text,
        ts=node.ts,
        valid_from=node.valid_from,
        valid_to=node.valid_to,
        current=current,
    )


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 6)


# ------------------------------------------------------------------ functional API
def query(
    memory: TenantMemory,
    request: QueryRequest,
    embedder: Embedder,
    config: ReadConfig | None = None,
    reader: Reader | None = None,
) -> QueryResponse:
    """One-shot query (builds the lexical index if no Reader is given)."""
    return (reader or Reader(embedder, config)).query(memory, request)


def recall(
    memory: TenantMemory,
    request: RecallRequest,
    embedder: Embedder,
    config: ReadConfig | None = None,
    reader: Reader | None = None,
) -> tuple[RecallResponse, ChangeSet]:
    return (reader or Reader(embedder, config)).recall(memory, request)
