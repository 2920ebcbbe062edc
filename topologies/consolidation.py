"""The four structural debts of an always-on memory (docs/DESIGN.md section 4; CogniFold §3.2).

``consolidate`` runs inside every fold and looks only at what the fold touched
(``scope.created`` / ``scope.reinforced`` / ``scope.touched``) and their bounded
neighbourhoods, so its cost does not grow with the graph:

- **accumulation**: the executor's ``connect`` already turns corroboration into REINFORCES
  and bumps ``node.reinforcement``; here, concepts co-activated by the same event (created or
  reinforced by it) get, or strengthen, a RELATED_TO edge between them (Hebbian
  co-activation; at most ``MAX_COACTIVE`` concepts, so at most 15 pairs, per fold).
- **compression**: each touched CONCEPT is compared with its ``MERGE_KNN`` nearest concepts;
  above ``merge_similarity`` they merge through ``PlanExecutor.merge``. In topic space two
  concepts whose members converge merge at ``topics.merge_similarity``, or already at
  ``topics.code_merge_similarity`` when most members of the smaller one (more than
  ``topics.code_merge_share``) name tickets or mail threads the other's members name
  (``boundaries.code_share``). The keeper is the
  more-accessed node (ties: more reinforced, then older, then the smaller id); absorbed ids
  keep resolving through aliases. Concepts linked by SUPERSEDES (a belief revision) and a core
  schema with a non-core one never merge.
- **decay**: lazy. ``w(t) = w0 * exp(-lambda * (t - t_last))`` is computed when read
  (``graph.decayed_weight``); nothing is rewritten per fold. ``sweep`` (periodic, outside the
  fold) prunes edges whose decayed weight fell below ``prune_floor``.
- **completion**: a touched CONCEPT with no edge to any other concept gets RELATED_TO edges to
  its ``completion_k`` nearest concepts above ``completion_similarity``.

Pruning choice: provenance and obligations never fade. GROUNDS, DERIVED_FROM, SUPERSEDES,
DEADLINE_FOR, USER_FEEDBACK and the TRIGGERS edges that support an INTENT are never pruned
(they say where a node came from, what the user said, which belief replaced which, and why an
intent exists). Associations and corroborations decay and are pruned: RELATED_TO, CAUSES,
PART_OF, REINFORCES and EVENT -> EVENT TRIGGERS. A pruned REINFORCES edge forgets *which* old
event corroborated a concept; the concept keeps its ``reinforcement`` count.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import datetime

import structlog

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies import topics
from topologies.boundaries import Boundaries, code_share
from topologies.config import EngineConfig
from topologies.executor import PlanExecutor
from topologies.graph import decayed_weight
from topologies.memory import TOPIC, TenantMemory
from topologies.naming import Namer
from topologies.naming.descriptions import relabelled
from topologies.scope import FoldScope

log = structlog.get_logger(__name__)

MAX_COACTIVE = 6  # concepts linked pairwise by co-activation per fold
MAX_TOUCHED_CONCEPTS = 16  # concepts compressed / completed per fold
MERGE_KNN = 3  # nearest concepts compared for compression
SWEEP_BATCH = 5000  # edges pruned at most per sweep call (weakest first)

PROTECTED_EDGES = frozenset(
    {
        EdgeKind.GROUNDS,
        EdgeKind.DERIVED_FROM,
        EdgeKind.SUPERSEDES,
        EdgeKind.DEADLINE_FOR,
        EdgeKind.USER_FEEDBACK,
    }
)


class Consolidator:
    """Discharges the four debts for what one fold touched; sweeps decayed edges on demand."""

    def __init__(self, executor: PlanExecutor, config: EngineConfig, namer: Namer) -> None:
        self.executor = executor
        self.config = config
        self.boundaries = Boundaries(executor.embedder, config, namer)

    # ----------------------------------------------------------------- per fold
    def consolidate(self, memory: TenantMemory, scope: FoldScope) -> None:
        coactivated = self.coactivate(memory, scope)
        merged = self.compress(memory, scope)
        split = self.boundaries.split(memory, scope)
        completed = self.complete(memory, scope)
        redescribed = self.redescribe(memory, scope)
        if coactivated or merged or split or completed or redescribed:
            log.debug(
                "consolidated",
                tenant=memory.tenant,
                event_id=scope.event_id,
                coactivated=coactivated,
                merged=merged,
                split=split,
                completed=completed,
                redescribed=redescribed,
            )

    def redescribe(self, memory: TenantMemory, scope: FoldScope) -> int:
        """Descriptions name only labels that exist: an intent supported by a concept this
        fold renamed or merged names its supporting concepts' current labels."""
        graph = memory.graph
        intents: dict[str, None] = {}
        for concept_id in _touched_concepts(memory, scope):
            for edge in graph.out_edges(concept_id, EdgeKind.TRIGGERS):
                intents.setdefault(edge.dst, None)
        done = 0
        for intent_id in intents:
            node = graph.get(intent_id)
            if node is None or node.kind != NodeKind.INTENT or not node.text:
                continue
            triggers = sorted(graph.in_edges(intent_id, EdgeKind.TRIGGERS), key=_strongest)
            concepts = [graph.node(e.src) for e in triggers]
            labels = [c.title for c in concepts if c.kind == NodeKind.CONCEPT]
            text = relabelled(node.text, labels)
            if text is None:
                continue
            graph.replace_node(node.model_copy(update={"text": text, "updated_at": scope.now}))
            scope.touch(intent_id)
            done += 1
        return done

    def coactivate(self, memory: TenantMemory, scope: FoldScope) -> int:
        """Accumulation: RELATED_TO between concepts created or reinforced by the same event."""
        if not scope.event_id:
            return 0
        active = _concepts(memory, sorted(scope.created) + sorted(scope.reinforced))
        active = active[:MAX_COACTIVE]
        linked = 0
        for a, b in itertools.combinations(sorted(active), 2):
            src, dst = (b, a) if memory.graph.edge(b, a, EdgeKind.RELATED_TO) else (a, b)
            self.executor.connect(
                memory, scope, src, dst, EdgeKind.RELATED_TO, reasoning="co-activated by one event"
            )
            linked += 1
        return linked

    def compress(self, memory: TenantMemory, scope: FoldScope) -> int:
        """Compression: merge touched concepts with near-identical neighbours, by their label
        vectors (CONCEPT index) or by their members' centroids (TOPIC index: members converged)."""
        merged = 0
        for concept_id in _touched_concepts(memory, scope):
            current = concept_id
            for name, threshold in (
                (NodeKind.CONCEPT.value, self.config.consolidation.merge_similarity),
                (TOPIC, self._topic_merge_bar()),
            ):
                current, count = self._compress_one(memory, scope, current, name, threshold)
                merged += count
        return merged

    def _topic_merge_bar(self) -> float:
        """The lowest centroid cosine at which two concepts can merge in topic space: the
        ticket rule's bar, or the centroid bar when that is set lower (``code_merge_similarity``
        raised to 1.0 turns the ticket rule off, not every merge)."""
        topics_config = self.config.topics
        return min(topics_config.code_merge_similarity, topics_config.merge_similarity)

    def _compress_one(
        self, memory: TenantMemory, scope: FoldScope, current: str, name: str, threshold: float
    ) -> tuple[str, int]:
        """Merge ``current`` with its MERGE_KNN nearest in one index; returns the survivor."""
        index = memory.index(name)
        vector = index.get(current)
        if vector is None:
            return current, 0
        merged = 0
        for other, similarity in index.search(vector, MERGE_KNN, exclude={current}):
            if similarity < threshold or not self._mergeable(memory, current, other):
                continue
            if name == TOPIC and not self._converged(memory, current, other, similarity):
                continue
            keep, absorb = choose_keeper(memory.graph.node(current), memory.graph.node(other))
            self.executor.merge(memory, scope, keep.id, absorb.id)
            log.info(
                "concepts_merged",
                tenant=memory.tenant,
                keep=keep.id,
                absorbed=absorb.id,
                index=name,
                similarity=round(similarity, 3),
            )
            merged += 1
            current = keep.id
            if name == TOPIC:  # members of two concepts now under one name
                self.boundaries.relabel(memory, scope, current)
            if current not in index:
                break
        return current, merged

    def complete(self, memory: TenantMemory, scope: FoldScope) -> int:
        """Completion: a concept with no concept neighbour gets RELATED_TO to its kNN."""
        cfg = self.config.consolidation
        index = memory.index(NodeKind.CONCEPT)
        added = 0
        for concept_id in _touched_concepts(memory, scope):
            if memory.graph.has_neighbor_in(concept_id, memory.graph.ids(NodeKind.CONCEPT)):
                continue  # it has a concept neighbour
            vector = index.get(concept_id)
            if vector is None:
                continue
            for other, similarity in index.search(vector, cfg.completion_k, exclude={concept_id}):
                target = memory.graph.get(other)
                if similarity < cfg.completion_similarity or target is None:
                    continue
                if target.superseded_by is not None:
                    continue
                self.executor.connect(
                    memory,
                    scope,
                    concept_id,
                    other,
                    EdgeKind.RELATED_TO,
                    reasoning=f"kNN completion (cos={similarity:.2f})",
                )
                added += 1
        return added

    def _converged(self, memory: TenantMemory, a: str, b: str, similarity: float) -> bool:
        """Both concepts have enough members for their centroids to say what they are about,
        and the centroids are near-identical, or close and most members of the smaller concept
        name tickets or mail threads the other's members name (``code_share``)."""
        cfg = self.config.topics
        least = cfg.merge_min_members
        if any(int(memory.graph.node(c).attrs.get(topics.MEMBERS_ATTR, 0)) < least for c in (a, b)):
            return False
        if similarity >= cfg.merge_similarity:
            return True
        return code_share(memory, a, b) > cfg.code_merge_share

    @staticmethod
    def _mergeable(memory: TenantMemory, a: str, b: str) -> bool:
        graph = memory.graph
        first, second = graph.get(a), graph.get(b)
        if first is None or second is None or first.id == second.id:
            return False
        if first.kind != NodeKind.CONCEPT or second.kind != NodeKind.CONCEPT:
            return False
        if first.core != second.core:
            return False
        if graph.edge(a, b, EdgeKind.SUPERSEDES) or graph.edge(b, a, EdgeKind.SUPERSEDES):
            return False
        return first.superseded_by is None and second.superseded_by is None

    # ------------------------------------------------------------------ periodic
    def sweep(self, memory: TenantMemory, now: datetime, limit: int = SWEEP_BATCH) -> int:
        """Prune decayed edges below ``prune_floor`` (weakest first, at most ``limit``).

        The scan reads every edge (it is periodic, not per fold); the writes, and so the
        transaction's journal and change set, are bounded by ``limit``. Call again while it
        returns ``limit`` to finish a large backlog.
        """
        cfg = self.config.consolidation
        doomed: list[tuple[float, Edge]] = []
        for edge in memory.graph.edges():
            if not prunable(memory, edge):
                continue
            weight = decayed_weight(edge, now, cfg.decay_per_day)
            if weight < cfg.prune_floor:
                doomed.append((weight, edge))
        doomed.sort(key=lambda item: (item[0], item[1].src, item[1].dst, item[1].kind.value))
        for _, edge in doomed[:limit]:
            memory.graph.remove_edge(edge.src, edge.dst, edge.kind)
        pruned = min(len(doomed), limit)
        log.info("decay_sweep", tenant=memory.tenant, pruned=pruned, backlog=len(doomed) - pruned)
        return pruned


def prunable(memory: TenantMemory, edge: Edge) -> bool:
    """Whether decay may remove this edge (see the module docstring for the choice)."""
    if edge.kind in PROTECTED_EDGES:
        return False
    if edge.kind == EdgeKind.TRIGGERS:
        target = memory.graph.get(edge.dst)
        return target is None or target.kind != NodeKind.INTENT
    return True


def choose_keeper(a: Node, b: Node) -> tuple[Node, Node]:
    """(keeper, absorbed): more accessed, then more reinforced, then older, then smaller id."""

    def rank(node: Node) -> tuple[int, int, float, str]:
        return (-node.access_count, -node.reinforcement, node.created_at.timestamp(), node.id)

    first, second = sorted((a, b), key=rank)
    return first, second


def concept_neighbours(memory: TenantMemory, node_id: str) -> set[str]:
    """Ids of the CONCEPT nodes adjacent to node_id (any edge kind, either direction)."""
    graph = memory.graph
    concepts = graph.ids(NodeKind.CONCEPT)
    return {other for other in graph.neighbors(node_id) if other in concepts and other != node_id}


def _concepts(memory: TenantMemory, ids: Iterable[str]) -> list[str]:
    """Existing CONCEPT ids among ids (aliases resolved), first occurrence order, no repeats."""
    seen: dict[str, None] = {}
    concepts = memory.graph.ids(NodeKind.CONCEPT)
    for raw in ids:
        node_id = memory.graph.resolve(raw)
        if node_id in concepts:
            seen.setdefault(node_id, None)
    return list(seen)


def _strongest(edge: Edge) -> tuple[float, str]:
    """Supporting concepts in the order an intent's view lists them: strongest first."""
    return (-edge.w0, edge.src)


def _touched_concepts(memory: TenantMemory, scope: FoldScope) -> list[str]:
    """Created, then reinforced, then other touched concepts; bounded, deterministic order."""
    ordered = sorted(scope.created) + sorted(scope.reinforced) + sorted(scope.touched)
    return _concepts(memory, ordered)[:MAX_TOUCHED_CONCEPTS]
