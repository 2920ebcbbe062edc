"""The read path's entry points: :meth:`Reader.query` (never writes) and :meth:`Reader.recall`
(a write: it records the recall in a transaction and returns the ChangeSet to persist).

Pipeline of a query (docs/read_path.md): retrieval (BM25 without the names found everywhere,
dense kNN, a sub-query over the periods the query names, pseudo-relevance feedback) ->
reciprocal rank fusion -> the second hop (events sharing a rare name with the query or the
first hits) -> graph expansion (BFS with per-hop decay + personalized PageRank over all those
seeds, bounded) -> surfacing of concepts / intents whose evidence matched -> scoring (with
``ReadConfig.graph_cap``, off by default, what the graph lifted held below what led to it:
lift.py), anchored on the query's names and periods -> filters (kinds, time) -> k items
that each bring evidence the others do not (an event and its facts collapse, whole chains,
MMR). No LLM at any step.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.entities import ensure_entity_index
from topologies.memory import ChangeSet, TenantMemory
from topologies.read.chains import chain_for_hit
from topologies.read.entities import Anchors, EntityCache, Hop, entity_hops, names_in
from topologies.read.evidence import SURFACED_KINDS, citations, event_ids, supported
from topologies.read.expansion import Expansion, expand
from topologies.read.filters import kinds_filter, time_filter
from topologies.read.lexical import INDEXED_KINDS, LexicalIndex
from topologies.read.lift import Leaders, held, leaders
from topologies.read.recall_model import RECALL_ATTR, RecallState, days_between, recall_probability
from topologies.read.retrieve import (
    ANCHORED_KINDS,
    Retrieval,
    common_names,
    dense_search,
    retrieve,
)
from topologies.read.select import Candidate, Group, choose, collapse
from topologies.read.temporal import periods, windows, within
from topologies.read.timeline import Timeline
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

NO_CLOCK = datetime(1970, 1, 1, tzinfo=UTC)  # "now" of a memory that has seen no event

CLOCK_KEY = "clock"  # the engine's stream clock (topologies.engine.CLOCK_KEY)


@dataclass
class _TenantState:
    lexical: LexicalIndex
    timeline: Timeline
    entities: EntityCache = field(default_factory=EntityCache)
    memory_id: int = 0


def _always(node: Node) -> bool:
    return True


def _best_first(item: tuple[float, str]) -> tuple[float, str]:
    return -item[0], item[1]


@dataclass
class _Signals:
    """What ranked the candidates of one query, node by node."""

    found: Retrieval
    in_time: Callable[[Node], bool]  # the request's time filter
    base: dict[str, float] = field(default_factory=dict)  # direct hits, by fused rank
    hopped: dict[str, Hop] = field(default_factory=dict)  # the second hop
    expansion: Expansion = field(default_factory=Expansion)
    surfaced: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # (seed, value)
    surface: dict[str, float] = field(default_factory=dict)
    anchors: dict[str, list[str]] = field(default_factory=dict)
    in_period: set[str] = field(default_factory=set)
    score: dict[str, float] = field(default_factory=dict)
    pagerank: dict[str, float] = field(default_factory=dict)  # as counted (topologies.read.lift)

    def explain(self, node_id: str, collapsed: list[str]) -> Explanation:
        found, expansion = self.found, self.expansion
        bm25 = found.lexical_rank.get(node_id)
        dense = found.dense_rank.get(node_id)
        hop = self.hopped.get(node_id)
        return Explanation(
            bm25_rank=bm25[0] if bm25 else None,
            bm25_score=_round(bm25[1]) if bm25 else None,
            dense_rank=dense[0] if dense else None,
            dense_cosine=_round(dense[1]) if dense else None,
            rrf=round(found.fused.get(node_id, 0.0), 6),
            expansion=round(expansion.received.get(node_id, 0.0), 6),
            hops=0 if node_id in self.base else expansion.hops.get(node_id),
            via=expansion.via.get(node_id),
            pagerank=round(self.pagerank.get(node_id, 0.0), 6),
            surfaced_by=len(self.surfaced.get(node_id, ())),
            surface=round(self.surface.get(node_id, 0.0), 6),
            anchors=self.anchors.get(node_id, []),
            shared_name=hop.name if hop else None,
            in_period=node_id in self.in_period,
            collapsed=collapsed,
        )


def stream_now(memory: TenantMemory) -> datetime:
    """The tenant's stream clock (never the wall clock). A memory without events has none: its
    queries are dated at the epoch, where nothing is."""
    clock = memory.meta.get(CLOCK_KEY)
    if clock:
        return datetime.fromisoformat(str(clock))
    latest = max((n.ts for n in memory.graph.nodes(NodeKind.EVENT) if n.ts), default=None)
    return latest or NO_CLOCK


class Reader:
    """Holds the per-tenant lexical index and timeline; stateless otherwise."""

    def __init__(self, embedder: Embedder, config: EngineConfig | None = None) -> None:
        """``config`` is the engine's: the read path's own part (``config.read``) and the
        memory's decay rate (``config.consolidation.decay_per_day``)."""
        engine_config = config or EngineConfig()
        self.embedder = embedder
        self.config = engine_config.read
        self.decay_per_day = engine_config.consolidation.decay_per_day
        self._states: dict[str, _TenantState] = {}

    # ------------------------------------------------------------ index upkeep
    def build(self, memory: TenantMemory) -> None:
        """(Re)build the tenant's lexical index and timeline, e.g. after a load."""
        state = self._states.get(memory.tenant)
        if state is None:
            state = _TenantState(LexicalIndex(memory.tenant), Timeline())
            self._states[memory.tenant] = state
        state.memory_id = id(memory)
        state.entities.clear()
        state.lexical.build(memory)
        state.timeline.build(memory)

    def apply(self, changes: ChangeSet) -> None:
        """Follow a committed ChangeSet (call after every commit; cheap when unrelated)."""
        state = self._states.get(changes.tenant)
        if state is None:
            return  # built lazily on first query
        state.lexical.apply(changes)
        state.timeline.apply(changes)
        state.entities.forget(changes.nodes)

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
        state = self._state(memory)
        now = stream_now(memory)
        signals = self._signals(memory, state, request, now)
        kinds = kinds_filter(request.kinds)
        raw = memory.graph.g._node  # node id -> {"n": Node}; hot loops skip alias resolution
        in_time = signals.in_time
        window = heapq.nsmallest(  # the best, as sorted(...)[:n] would give them
            self.config.select_factor * request.k + self.config.select_extra,
            (
                (score, node_id)
                for node_id, score in signals.score.items()
                if raw[node_id]["n"].kind in kinds
                and (in_time is _always or in_time(raw[node_id]["n"]))
            ),
            key=_best_first,
        )
        candidates, arcs = self._candidates(
            memory, window, signals.score, signals.found.fused, request
        )
        chosen = choose(
            collapse(candidates),
            request.k,
            memory.vector,
            self.config.mmr_weight,
            self.config.mmr_floor,
        )
        items = [self._hit(memory, group, signals, arcs, request, now) for group in chosen]
        took = (time.perf_counter() - started) * 1000.0
        log.debug(
            "query",
            tenant=memory.tenant,
            k=request.k,
            hits=len(items),
            lexical=len(signals.found.lexical),
            dense=len(signals.found.dense),
            subgraph=signals.expansion.subgraph,
            took_ms=round(took, 2),
        )
        return QueryResponse(tenant=memory.tenant, text=request.text, items=items, took_ms=took)

    def _signals(
        self, memory: TenantMemory, state: _TenantState, request: QueryRequest, now: datetime
    ) -> _Signals:
        """Retrieval, the second hop, expansion, surfacing and the score of every candidate."""
        cfg = self.config
        graph = memory.graph
        in_time = time_filter(request.as_of, request.between)
        filtered = request.as_of is not None or request.between is not None
        raw = graph.g._node

        def time_ok(node_id: str) -> bool:
            data = raw.get(node_id)
            return data is not None and in_time(data["n"])

        # 1. retrieval: what the query names (people, places; periods of time) shapes it
        hybrid = request.mode == "hybrid"
        asked = names_in(request.text) if hybrid else frozenset()
        common: list[str] = []
        if asked:
            common = common_names(ensure_entity_index(memory), asked, cfg.entity_max_postings)
        spans = windows(periods(request.text, now), cfg.time_slack) if hybrid else []
        found = retrieve(
            memory,
            state.lexical,
            lambda text: self.embedder.embed([text])[0],
            request,
            cfg,
            common,
            spans,
            in_time if filtered else None,
        )
        # strength of a direct hit from its fused rank: RRF scores are too flat to propagate
        ordered = sorted(found.fused, key=lambda n: (-found.fused[n], n))
        out = _Signals(found, in_time if filtered else _always)
        out.base = {n: 1.0 / (1.0 + i * cfg.rank_decay) for i, n in enumerate(ordered)}

        # 2. the second hop: events sharing a rare name with the query or the first hits
        if hybrid and request.expand and cfg.entity_hop_weight > 0.0:
            first = [(n, out.base[n]) for n in ordered[: cfg.entity_hits]]
            index = ensure_entity_index(memory)
            hopped = entity_hops(
                index,
                state.entities,
                graph,
                asked,
                first,
                cfg.entity_max_postings,
                cfg.hop_spread,
            )
            out.hopped = {n: v for n, v in hopped.items() if not filtered or time_ok(n)}

        # 3. expansion (BFS + PageRank over the hits and the hopped events) and surfacing
        seeds = {n: out.base[n] for n in ordered[: cfg.seeds]}
        for node_id, hop in out.hopped.items():
            seeds[node_id] = max(seeds.get(node_id, 0.0), cfg.entity_hop_weight * hop.strength)
        if request.expand and seeds:
            out.expansion = expand(
                graph,
                state.timeline,
                seeds,
                cfg,
                now,
                self.decay_per_day,
                time_ok if filtered else None,
            )
        if request.surface:
            for seed, value in seeds.items():
                for target in supported(graph, seed):
                    target_node = graph.get(target)
                    if target_node is not None and target_node.kind in SURFACED_KINDS:
                        out.surfaced.setdefault(target, []).append((seed, value))

        # 4. the score of every candidate (a concept cites its evidence by query score even
        # when only concepts are asked for), anchored on the query's names and periods; with
        # ``graph_cap`` what the graph lifted is held to what led to it
        evidence: dict[str, float] = {}
        led: Leaders = {}
        out.pagerank = out.expansion.pagerank
        if cfg.graph_cap:
            evidence = seeds | out.base  # a node's own: retrieval, or a second hop's share
            led = _hold_pagerank(out, evidence)
        anchor = Anchors(asked, cfg.mention_weight)
        # the signals summed in a fixed order (base, expansion, PageRank, hop, surface), each
        # over the nodes it reached: a node a signal missed adds nothing
        score = dict(out.base)
        for signal, weight in (
            (out.expansion.received, cfg.expansion_weight),
            (out.pagerank, cfg.pagerank_weight),
        ):
            for node_id, value in signal.items():
                score[node_id] = score.get(node_id, 0.0) + weight * value
        for node_id, hop in out.hopped.items():
            if cfg.hop_spread and _counted(out.expansion, node_id, hop):
                continue
            score[node_id] = score.get(node_id, 0.0) + cfg.entity_hop_weight * hop.strength
        for node_id, support in out.surfaced.items():
            total = sum(value for _, value in support)
            surface = cfg.surface_weight * total / (1.0 + total)
            out.surface[node_id] = surface
            score[node_id] = score.get(node_id, 0.0) + surface
        if cfg.graph_cap:
            score = held(score, led, evidence)
        for node_id, value in score.items():
            data = raw.get(node_id)
            if data is None:
                continue
            node = data["n"]
            if node.kind in ANCHORED_KINDS:
                share, matched = anchor.match(graph, node) if anchor else (0.0, [])
                if share > 0.0:
                    out.anchors[node_id] = matched
                    value *= 1.0 + cfg.entity_boost * share
                if spans and within(node.ts, spans):
                    out.in_period.add(node_id)
                    value *= 1.0 + cfg.time_boost
            out.score[node_id] = value
        return out

    def _candidates(
        self,
        memory: TenantMemory,
        window: list[tuple[float, str]],
        score_of: dict[str, float],
        found_fused: dict[str, float],
        request: QueryRequest,
    ) -> tuple[list[Candidate], dict[str, list[Node]]]:
        """The best-scored nodes with what they cite; a chain's arc (cut at ``as_of``)."""
        cfg = self.config
        graph = memory.graph
        arcs: dict[str, list[Node]] = {}
        candidates: list[Candidate] = []
        for score, node_id in window:
            node = graph.node(node_id)
            cites = citations(
                graph, node, request.max_event_ids, cfg.evidence_depth, score_of, cfg.surfaced_cites
            )
            chain_key: str | None = None
            arc = chain_for_hit(graph, node) if request.chains else []
            if arc:
                if request.as_of is not None:
                    cutoff = request.as_of
                    arc = [n for n in arc if (n.valid_from or n.ts or n.created_at) <= cutoff]
                arcs[node_id] = arc
                chain_key = arc[0].id if arc else node_id
                for revision in reversed(arc):  # the chain cites its revisions, newest first
                    if revision.source_event_id and revision.source_event_id not in cites:
                        cites.append(revision.source_event_id)
            direct = found_fused.get(node_id, 0.0)
            candidates.append(Candidate(node_id, node.kind, score, cites, chain_key, direct))
        return candidates, arcs

    def _hit(
        self,
        memory: TenantMemory,
        group: Group,
        signals: _Signals,
        arcs: dict[str, list[Node]],
        request: QueryRequest,
        now: datetime,
    ) -> QueryHit:
        node = memory.graph.node(group.node_id)
        explanation = signals.explain(group.node_id, group.members)
        chain: list[ChainLink] | None = None
        revisions = arcs.get(group.node_id)
        if revisions is not None:
            chain = [
                _link(n, i == len(revisions) - 1 and n.superseded_by is None)
                for i, n in enumerate(revisions)
            ]
        qvec = signals.found.qvec
        if qvec is not None:
            explanation.recall_p = _recall_p(memory, node, qvec, now, self.config.recall_g0)
        return QueryHit(
            node_id=node.id,
            kind=node.kind,
            title=node.title,
            text=node.text,
            score=round(group.score, 6),
            ts=node.ts,
            explanation=explanation,
            event_ids=group.cites[: request.max_event_ids],
            chain=chain,
        )

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
        for node_id, cosine in dense_search(memory, qvec, request.candidates):
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
        with memory.transaction() as changes:
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


def _counted(expansion: Expansion, node_id: str, hop: Hop) -> bool:
    """Whether the expansion already counts a second hop: it reached the event from the hit
    whose name led there. Both say the event is near that hit; it counts once."""
    return hop.origin is not None and expansion.via.get(node_id) == hop.origin


def _hold_pagerank(out: _Signals, evidence: dict[str, float]) -> Leaders:
    """Sets the PageRank as counted: PageRank is the expansion's, so a node is held to the
    PageRank of the seed its expansion came from (as computed: a seed's centrality is not
    lowered by its own leader). Returns every node's leaders, for the score."""
    origin = leaders(out.expansion, {}, {}, evidence)
    out.pagerank = held(out.expansion.pagerank, origin, evidence, chained=False)
    return leaders(out.expansion, out.hopped, out.surfaced, evidence)


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
    config: EngineConfig | None = None,
    reader: Reader | None = None,
) -> QueryResponse:
    """One-shot query (builds the lexical index if no Reader is given)."""
    return (reader or Reader(embedder, config)).query(memory, request)


def recall(
    memory: TenantMemory,
    request: RecallRequest,
    embedder: Embedder,
    config: EngineConfig | None = None,
    reader: Reader | None = None,
) -> tuple[RecallResponse, ChangeSet]:
    return (reader or Reader(embedder, config)).recall(memory, request)
