"""The plan executor: whole-plan validation, then atomic application.

``validate`` checks the entire plan against the graph before anything changes (ids exist,
refs defined before use, edge kinds legal for the node kinds, EVENT nodes immutable, intent
lifecycle, every intent backed by at least two evidenced concepts). ``apply`` must run inside
an open TenantMemory transaction: the caller rolls back on any exception, so a plan is
applied entirely or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import structlog

from schemas.errors import PlanRejectedError
from schemas.graph import (
    EDGE_PRIOR_WEIGHT,
    EDGE_RULES,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    vector_text,
)
from schemas.intents import IntentStatus, can_transition
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, RemoveNode, UpdateNode, UpdatePlan
from topologies import topics
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.graph import decayed_weight
from topologies.intent_boundaries import converges
from topologies.memory import POOL, TOPIC, TenantMemory, stable_id
from topologies.plan_bounds import PlanBounds, check_bounds
from topologies.scope import INTENT_REVISION_ATTR, FoldScope
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

_PREFIX = {NodeKind.CONCEPT: "c", NodeKind.FACT: "f", NodeKind.INTENT: "i", NodeKind.TIME: "t"}
EVIDENCE_EDGES = (EdgeKind.GROUNDS, EdgeKind.REINFORCES, EdgeKind.DERIVED_FROM)
INTENT_VECTORS_KEY = "intent_vectors"
# what the stored intent vectors encode (``schemas.graph.vector_text``): 1 an intent's title and
# description, 2 its goal (the title without its deadline); a memory whose intents were
# embedded by another version has them embedded again at its next fold
# (``PlanExecutor.current_intent_vectors``), so an upgraded store searches its old intents
# and its new ones by the same thing
INTENT_VECTORS_VERSION = 2


def time_node_id(tenant: str, anchor: datetime) -> str:
    """TIME anchors are shared: one node per (tenant, minute)."""
    return stable_id("t", tenant, anchor.isoformat(timespec="minutes"))


@dataclass
class _Planned:
    """The validation pass's view of a node: existing or about to be created."""

    kind: NodeKind
    exists: bool


@dataclass
class ApplyReport:
    created: list[str] = field(default_factory=list)
    reinforced_instead: dict[str, str] = field(default_factory=dict)  # ref -> existing concept
    ops_applied: int = 0


class PlanExecutor:
    def __init__(self, embedder: Embedder, config: EngineConfig) -> None:
        self.embedder = embedder
        self.config = config

    def current_intent_vectors(self, memory: TenantMemory) -> int:
        """Embed again the intents of a memory stored when an intent's vector encoded
        something else than it does today, and record the version (inside the fold's
        transaction, so the store and a Kafka changelog keep both); the number embedded."""
        if memory.meta.get(INTENT_VECTORS_KEY) == INTENT_VECTORS_VERSION:
            return 0
        index = memory.index(NodeKind.INTENT)
        stale = sorted(
            (node for node in memory.graph.nodes(NodeKind.INTENT) if node.id in index),
            key=lambda node: node.id,
        )
        if stale:
            matrix = self.embedder.embed([node.vector_text for node in stale])
            for node, vector in zip(stale, matrix, strict=True):
                index.upsert(node.id, vector)
            log.info("intent_vectors_upgraded", tenant=memory.tenant, intents=len(stale))
        memory.set_meta(INTENT_VECTORS_KEY, INTENT_VECTORS_VERSION)
        return len(stale)

    # ------------------------------------------------------------- validation
    def validate(
        self,
        memory: TenantMemory,
        plan: UpdatePlan,
        scope: FoldScope,
        bounds: PlanBounds | None = None,
    ) -> None:
        """Raise PlanRejectedError naming the first offending op; change nothing.

        ``bounds``: the plan comes from a planner and may do only what one event's plan may
        (topologies/plan_bounds.py); None for the engine's own plans and the user's API.
        """
        graph = memory.graph
        known: dict[str, _Planned] = {}
        removed: set[str] = set()
        triggers: dict[str, set[str]] = {}  # intent ref/id -> supporting concept refs/ids

        def lookup(ref: str, index: int) -> _Planned:
            if ref in known:
                return known[ref]
            if ref in removed:
                raise PlanRejectedError(f"{ref!r} was removed earlier in the plan", index)
            node = graph.get(ref)
            if node is None:
                if ref == scope.event_id and scope.event_node_id:
                    return _Planned(NodeKind.EVENT, True)
                raise PlanRejectedError(f"unknown node id {ref!r}", index)
            return _Planned(node.kind, True)

        grounding_ok = {scope.event_id}
        for index, op in enumerate(plan.ops):
            for ref in op.grounded_in:
                if ref not in grounding_ok and ref not in known and graph.get(ref) is None:
                    raise PlanRejectedError(f"grounded_in names unknown id {ref!r}", index)
            if isinstance(op, AddNode):
                if op.kind == NodeKind.EVENT:
                    raise PlanRejectedError("EVENT nodes come only from the stream", index)
                if op.ref in known or (graph.get(op.ref) is not None and op.kind != NodeKind.TIME):
                    raise PlanRejectedError(f"ref {op.ref!r} is already in use", index)
                if op.kind == NodeKind.TIME and op.ts is None and op.deadline is None:
                    raise PlanRejectedError("a TIME node needs ts or deadline", index)
                known[op.ref] = _Planned(op.kind, False)
            elif isinstance(op, AddEdge):
                src, dst = lookup(op.src, index), lookup(op.dst, index)
                if (src.kind, dst.kind) not in EDGE_RULES[op.kind]:
                    raise PlanRejectedError(
                        f"{op.kind.value} cannot go from {src.kind.value} to {dst.kind.value}",
                        index,
                    )
                if op.src == op.dst:
                    raise PlanRejectedError("self-loops are not allowed", index)
                if op.kind == EdgeKind.SUPERSEDES and src.kind == NodeKind.EVENT:
                    raise PlanRejectedError("EVENT revisions are linked by the engine only", index)
                if op.kind == EdgeKind.TRIGGERS and dst.kind == NodeKind.INTENT:
                    triggers.setdefault(op.dst, set()).add(op.src)
            elif isinstance(op, UpdateNode):
                target = lookup(op.id, index)
                if target.kind == NodeKind.EVENT:
                    raise PlanRejectedError("EVENT nodes are immutable", index)
                if op.status is not None:
                    if target.kind != NodeKind.INTENT:
                        raise PlanRejectedError("only INTENT nodes have a status", index)
                    node = graph.get(op.id)
                    # an intent created earlier in this plan starts pending
                    current = IntentStatus.PENDING if node is None else node.status
                    if (
                        current is not None
                        and current != op.status
                        and not can_transition(current, op.status)
                    ):
                        raise PlanRejectedError(
                            f"intent cannot go from {current.value} to {op.status.value}", index
                        )
            elif isinstance(op, MergeNodes):
                keep = lookup(op.keep, index)
                if keep.kind == NodeKind.EVENT:
                    raise PlanRejectedError("EVENT nodes cannot be merged", index)
                for other in op.absorb:
                    absorbed = lookup(other, index)
                    if absorbed.kind != keep.kind:
                        raise PlanRejectedError("only nodes of one kind merge", index)
                    if other == op.keep or graph.resolve(other) == graph.resolve(op.keep):
                        raise PlanRejectedError("a node cannot absorb itself", index)
                    removed.add(other)
                    known.pop(other, None)
            elif isinstance(op, RemoveNode):
                target = lookup(op.id, index)
                if target.kind == NodeKind.EVENT:
                    raise PlanRejectedError("EVENT nodes cannot be removed by a plan", index)
                removed.add(op.id)
                known.pop(op.id, None)
        self._validate_intents(memory, plan, known, triggers)
        if bounds is not None:
            check_bounds(memory, plan, bounds, self.embedder, self.config.bounds)

    def _validate_intents(
        self,
        memory: TenantMemory,
        plan: UpdatePlan,
        known: dict[str, _Planned],
        triggers: dict[str, set[str]],
    ) -> None:
        need = self.config.intents.min_supporting_concepts
        for index, op in enumerate(plan.ops):
            if not (isinstance(op, AddNode) and op.kind == NodeKind.INTENT):
                continue
            supporters = triggers.get(op.ref, set())
            evidenced = [s for s in supporters if self._has_evidence(memory, plan, s)]
            if len(evidenced) < need and not self._one_converging_theme(memory, evidenced):
                raise PlanRejectedError(
                    f"intent {op.ref!r} needs TRIGGERS from at least {need} concepts with "
                    f"evidence, has {len(evidenced)}",
                    index,
                )

    @staticmethod
    def _one_converging_theme(memory: TenantMemory, evidenced: list[str]) -> bool:
        """One existing concept whose events already come from several sources (a goal inside
        one theme, e.g. a race: a registration email, training notes, calendar runs). Evidence
        from other events and sources, so no single event can conjure it either."""
        if len(evidenced) != 1 or memory.graph.get(evidenced[0]) is None:
            return False
        return converges(memory, topics.member_events(memory, memory.graph.resolve(evidenced[0])))

    @staticmethod
    def _has_evidence(memory: TenantMemory, plan: UpdatePlan, concept: str) -> bool:
        node = memory.graph.get(concept)
        if node is not None:
            if node.kind != NodeKind.CONCEPT:
                return False
            if any(
                e.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
                for e in memory.graph.in_edges(node.id)
            ):
                return True
        return any(
            isinstance(op, AddEdge)
            and op.dst == concept
            and op.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
            for op in plan.ops
        )

    # ------------------------------------------------------------------ apply
    def apply(
        self,
        memory: TenantMemory,
        plan: UpdatePlan,
        scope: FoldScope,
        bounds: PlanBounds | None = None,
    ) -> ApplyReport:
        """Validate (within ``bounds`` when given), then apply every op. Call inside an open
        transaction."""
        if not memory.in_transaction:
            raise RuntimeError("apply() needs an open transaction")
        self.validate(memory, plan, scope, bounds)
        vectors = self._embed_new_nodes(plan)
        report = ApplyReport()
        if scope.event_node_id:
            scope.ref_ids.setdefault(scope.event_id, scope.event_node_id)
        for index, op in enumerate(plan.ops):
            try:
                self._apply_op(memory, op, scope, vectors, report)
            except PlanRejectedError:
                raise
            except Exception as exc:  # any failure rejects the whole plan
                raise PlanRejectedError(f"{type(exc).__name__}: {exc}", index) from exc
            report.ops_applied += 1
        return report

    def _embed_new_nodes(self, plan: UpdatePlan) -> dict[str, Vector]:
        adds = [op for op in plan.ops if isinstance(op, AddNode) and op.kind != NodeKind.TIME]
        if not adds:
            return {}
        matrix = self.embedder.embed([vector_text(op.kind, op.title, op.text) for op in adds])
        return {op.ref: matrix[i] for i, op in enumerate(adds)}

    def _resolve(self, memory: TenantMemory, scope: FoldScope, ref: str) -> str:
        if ref in scope.ref_ids:
            return memory.graph.resolve(scope.ref_ids[ref])
        return memory.graph.resolve(ref)

    def _apply_op(
        self,
        memory: TenantMemory,
        op: PlanOp,
        scope: FoldScope,
        vectors: dict[str, Vector],
        report: ApplyReport,
    ) -> None:
        if isinstance(op, AddNode):
            self._add_node(memory, op, scope, vectors.get(op.ref), report)
        elif isinstance(op, AddEdge):
            src = self._resolve(memory, scope, op.src)
            dst = self._resolve(memory, scope, op.dst)
            kind = op.kind
            if (
                kind == EdgeKind.GROUNDS
                and op.dst in report.reinforced_instead
                and memory.graph.node(src).kind == NodeKind.EVENT
            ):
                kind = EdgeKind.REINFORCES  # the concept existed: corroboration, not creation
            if src == dst:
                return  # both ends folded into one node by near-duplicate resolution
            self.connect(memory, scope, src, dst, kind, op.weight, op.reasoning)
        elif isinstance(op, UpdateNode):
            self._update_node(memory, op, scope)
        elif isinstance(op, MergeNodes):
            keep = self._resolve(memory, scope, op.keep)
            for other in op.absorb:
                absorbed = self._resolve(memory, scope, other)
                if absorbed != keep:
                    self.merge(memory, scope, keep, absorbed)
        elif isinstance(op, RemoveNode):
            node_id = self._resolve(memory, scope, op.id)
            for name in (memory.graph.node(node_id).kind.value, POOL, TOPIC):
                if name in memory.indexes:
                    memory.indexes[name].remove(node_id)
            memory.graph.remove_node(node_id)
            for tracked in (scope.touched, scope.created, scope.reinforced):
                tracked.discard(node_id)

    def _add_node(
        self,
        memory: TenantMemory,
        op: AddNode,
        scope: FoldScope,
        vector: Vector | None,
        report: ApplyReport,
    ) -> None:
        if op.kind == NodeKind.TIME:
            anchor = op.ts or op.deadline
            assert anchor is not None
            node_id = time_node_id(memory.tenant, anchor)
            scope.ref_ids[op.ref] = node_id
            if node_id in memory.graph:
                return
        elif op.kind == NodeKind.CONCEPT and vector is not None:
            duplicate = self.near_duplicate_concept(memory, vector)
            if duplicate is not None:
                scope.ref_ids[op.ref] = duplicate
                report.reinforced_instead[op.ref] = duplicate
                self.reinforce_node(memory, scope, duplicate)
                return
            node_id = stable_id(_PREFIX[op.kind], memory.tenant, scope.event_id, op.ref)
        else:
            node_id = stable_id(_PREFIX[op.kind], memory.tenant, scope.event_id, op.ref)
        if node_id in memory.graph:
            raise PlanRejectedError(f"node id {node_id!r} already exists")
        now = scope.now
        attrs = dict(op.attrs)
        if op.reasoning:
            attrs["reasoning"] = op.reasoning[:500]
        node = Node(
            id=node_id,
            kind=op.kind,
            tenant=memory.tenant,
            title=op.title,
            text=op.text,
            ts=op.ts or op.deadline or now,
            created_at=now,
            updated_at=now,
            category=op.category,
            status=IntentStatus.PENDING if op.kind == NodeKind.INTENT else None,
            deadline=op.deadline if op.kind in (NodeKind.INTENT, NodeKind.TIME) else None,
            inferred=op.kind in (NodeKind.CONCEPT, NodeKind.INTENT, NodeKind.FACT),
            source_event_id=scope.event_id or None,
            attrs=attrs,
        )
        memory.graph.add_node(node)
        if vector is not None and node.kind.value in memory.indexes:
            memory.indexes[node.kind.value].upsert(node_id, vector)
        scope.ref_ids[op.ref] = node_id
        scope.created.add(node_id)
        scope.touch(node_id)
        report.created.append(node_id)
        if node.kind == NodeKind.INTENT:
            scope.intent_changed(node_id, None)

    def _update_node(self, memory: TenantMemory, op: UpdateNode, scope: FoldScope) -> None:
        node_id = self._resolve(memory, scope, op.id)
        node = memory.graph.node(node_id)
        changes: dict[str, object] = {"updated_at": scope.now}
        for name in ("title", "text", "category", "deadline"):
            value = getattr(op, name)
            if value is not None:
                changes[name] = value
        if op.attrs:  # the revision counter is the engine's: no plan sets or resets it
            attrs = {k: v for k, v in op.attrs.items() if k != INTENT_REVISION_ATTR}
            changes["attrs"] = {**node.attrs, **attrs}
        if node.kind == NodeKind.INTENT and _renames(node, op):
            self._count_revision(node, scope, changes)
        if op.status is not None and op.status != node.status:
            scope.intent_changed(node_id, node.status)
            changes["status"] = op.status
        updated = memory.graph.update_node(node_id, **changes)
        # re-embedded only when what its vector encodes changed (an intent whose description
        # grows or whose deadline moves keeps its vector: a model call per reinforcement saved)
        index = memory.indexes.get(updated.kind.value)
        renamed = op.title is not None or op.text is not None
        if (
            renamed
            and index is not None
            and (updated.vector_text != node.vector_text or node_id not in index)
        ):
            index.upsert(node_id, self.embedder.embed([updated.vector_text])[0])
        scope.touch(node_id)

    @staticmethod
    def _count_revision(node: Node, scope: FoldScope, changes: dict[str, object]) -> None:
        """An intent's title or deadline changes: its revision counts the first rename of a
        fold, and the scope keeps what it was (an ``intent.updated`` message says both)."""
        if not scope.intent_renamed(node.id, node.title, node.deadline):
            return
        attrs = changes.get("attrs")
        merged = dict(attrs) if isinstance(attrs, dict) else dict(node.attrs)
        revision = node.attrs.get(INTENT_REVISION_ATTR, 0)
        merged[INTENT_REVISION_ATTR] = (revision if isinstance(revision, int) else 0) + 1
        changes["attrs"] = merged

    # ------------------------------------------------- shared graph operations
    def near_duplicate_concept(self, memory: TenantMemory, vector: Vector) -> str | None:
        hits = memory.index(NodeKind.CONCEPT).search(vector, 1)
        if hits and hits[0][1] >= self.config.consolidation.near_duplicate_title:
            return hits[0][0]
        return None

    def connect(
        self,
        memory: TenantMemory,
        scope: FoldScope,
        src: str,
        dst: str,
        kind: EdgeKind,
        weight: float | None = None,
        reasoning: str = "",
    ) -> Edge:
        """Add the edge, or reinforce it if it exists (lazy decay refreshed at `now`)."""
        cfg = self.config.consolidation
        existing = memory.graph.edge(src, dst, kind)
        if existing is not None:
            current = decayed_weight(existing, scope.now, cfg.decay_per_day)
            edge = existing.model_copy(
                update={
                    "w0": min(cfg.max_weight, current + cfg.reinforce_boost),
                    "t_last": max(scope.now, existing.t_last),
                    "count": existing.count + 1,
                }
            )
        else:
            attrs = {"reasoning": reasoning[:300]} if reasoning else {}
            edge = Edge(
                src=src,
                dst=dst,
                kind=kind,
                w0=weight if weight is not None else EDGE_PRIOR_WEIGHT[kind],
                t_last=scope.now,
                created_at=scope.now,
                attrs=attrs,
            )
        joins = existing is None and self._new_member(memory, src, dst, kind)
        memory.graph.put_edge(edge)
        if joins:  # the concept's centroid moves (read before the event leaves the POOL)
            topics.add_member(memory, dst, src, self.config.topics)
        if kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES, EdgeKind.DERIVED_FROM):
            self._leave_pool(memory, src, dst)
        if kind == EdgeKind.REINFORCES:
            self.reinforce_node(memory, scope, dst)
        scope.touch(src)
        scope.touch(dst)
        return edge

    @staticmethod
    def _new_member(memory: TenantMemory, src: str, dst: str, kind: EdgeKind) -> bool:
        """Whether this edge makes an EVENT a member of a CONCEPT it was not a member of."""
        graph = memory.graph
        if kind not in topics.MEMBER_EDGES or dst not in graph.ids(NodeKind.CONCEPT):
            return False
        if src not in graph.ids(NodeKind.EVENT):
            return False
        return all(graph.edge(src, dst, other) is None for other in topics.MEMBER_EDGES)

    def reinforce_node(self, memory: TenantMemory, scope: FoldScope, node_id: str) -> None:
        node = memory.graph.node(node_id)
        if scope.event_id and node.attrs.get("last_reinforced_by") == scope.event_id:
            return  # one corroboration per event
        attrs = {**node.attrs, "last_reinforced_by": scope.event_id}
        memory.graph.replace_node(
            node.model_copy(
                update={
                    "reinforcement": node.reinforcement + 1,
                    "updated_at": scope.now,
                    "attrs": attrs,
                }
            )
        )
        scope.reinforced.add(node_id)
        scope.touch(node_id)

    @staticmethod
    def _leave_pool(memory: TenantMemory, *node_ids: str) -> None:
        pool = memory.indexes[POOL]
        for node_id in node_ids:
            if node_id in pool:
                pool.remove(node_id)

    def merge(self, memory: TenantMemory, scope: FoldScope, keep: str, absorbed: str) -> None:
        """MERGE_NODES: the keeper takes every edge of the absorbed node; its id keeps resolving."""
        graph = memory.graph
        keeper, gone = graph.node(keep), graph.node(absorbed)
        for edge in list(graph.incident(absorbed)):
            src = keep if edge.src == absorbed else edge.src
            dst = keep if edge.dst == absorbed else edge.dst
            graph.remove_edge(edge.src, edge.dst, edge.kind)
            if src == dst:
                continue
            existing = graph.edge(src, dst, edge.kind)
            if existing is None:
                graph.put_edge(edge.model_copy(update={"src": src, "dst": dst}))
            else:
                graph.put_edge(
                    existing.model_copy(
                        update={
                            "w0": min(
                                self.config.consolidation.max_weight, max(existing.w0, edge.w0)
                            ),
                            "t_last": max(existing.t_last, edge.t_last),
                            "count": existing.count + edge.count,
                        }
                    )
                )
            scope.touch(src if src != keep else dst)
        merged_from = [*keeper.attrs.get("merged_from", []), absorbed]
        graph.replace_node(
            keeper.model_copy(
                update={
                    "reinforcement": keeper.reinforcement + gone.reinforcement,
                    "access_count": keeper.access_count + gone.access_count,
                    "updated_at": scope.now,
                    "attrs": {**keeper.attrs, "merged_from": merged_from[-50:]},
                }
            )
        )
        if keeper.kind.value in memory.indexes:
            memory.indexes[keeper.kind.value].merge(
                keep,
                absorbed,
                keep_weight=float(max(1, keeper.reinforcement)),
                absorbed_weight=float(max(1, gone.reinforcement)),
            )
        if keeper.kind == NodeKind.CONCEPT:
            topics.merge_centroids(memory, keep, absorbed)
        graph.remove_node(absorbed)
        graph.set_alias(absorbed, keep)
        if gone.kind == NodeKind.INTENT and gone.status is not None:
            scope.intent_changes.pop(absorbed, None)
        if absorbed in scope.created or absorbed in scope.reinforced:
            scope.reinforced.add(keep)  # what this fold corroborated lives on in the keeper
        scope.touched.discard(absorbed)
        scope.created.discard(absorbed)
        scope.reinforced.discard(absorbed)
        scope.touch(keep)


def cosine(a: Vector, b: Vector) -> float:
    return float(np.dot(a, b))


def _renames(node: Node, op: UpdateNode) -> bool:
    """Whether the update gives the node another title or deadline."""
    return (op.title is not None and op.title != node.title) or (
        op.deadline is not None and op.deadline != node.deadline
    )
