"""What one event's plan may do when a planner wrote it.

A planner turns one event into an UpdatePlan; the LLM planner does so from event text written
by third parties, so a model that obeys text inside an event ("ignore previous instructions
...") must not be able to steer the graph. The executor checks these bounds on every plan that
comes from a planner (``PlanExecutor.validate(..., bounds=...)``); the engine's own
consolidation and emergence, the nightly engine and the user's API call it without bounds and
keep their powers. A plan that breaks a bound is refused whole (PlanRejectedError). The LLM
planner refuses a model reply with such an op whole too (a repair round, then the heuristic
plan), except a concept rename or merge beyond the similarity bounds, which it drops as a
slip (docs/llm.md); either way the event is still folded and nothing out of bounds is applied.

1. **Grounding.** Every id a plan names (``src``, ``dst``, ``id``, ``keep``, ``absorb``,
   ``grounded_in``) is one of its own refs, the event, or a node of the event's assembled
   context: the context tiers, the kNN hits, the nodes the planner looked up itself
   (``PlanRequest.consulted``) and the event node's neighbours.
2. **Removal.** REMOVE_NODE only of a node the same plan created.
3. **Intents.** A planner never sets an intent's status (only the user's API does) and never
   renames an existing intent; MERGE_NODES never absorbs an existing intent.
4. **Renames.** A new title or text of an existing node must be close to the old text (cosine
   >= ``rename_similarity``).
5. **Merges.** Every absorbed node is close to the keeper (cosine >= ``merge_similarity``).
6. **Intent support.** A TRIGGERS edge into an intent comes from a concept close to the
   intent's title (cosine >= ``intent_support_similarity``), and a new intent needs at least one
   supporting concept that this event grounds or reinforces in the same plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from schemas.errors import PlanRejectedError
from schemas.graph import EdgeKind, NodeKind, node_text, vector_text
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, RemoveNode, UpdateNode, UpdatePlan
from topologies.config import PlanBoundsConfig
from topologies.embedding import Embedder
from topologies.memory import TenantMemory
from topologies.planner import PlanRequest
from topologies.vector_index import Vector

_EVENT_EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)


@dataclass(frozen=True)
class PlanBounds:
    """The ids one event's plan may name besides its own refs."""

    event_id: str
    event_node_id: str
    grounds: frozenset[str]

    @classmethod
    def for_request(cls, request: PlanRequest) -> PlanBounds:
        """The event, its assembled context, what the planner looked up, the event's neighbours."""
        node_id = request.event_node.id
        graph = request.memory.graph
        ids = {request.event.id, node_id, *request.context.ids(), *request.context.knn}
        ids |= request.consulted
        ids |= graph.neighbors(node_id)
        return cls(request.event.id, node_id, frozenset(ids | {graph.resolve(i) for i in ids}))

    def allows(self, memory: TenantMemory, node_id: str) -> bool:
        return node_id in self.grounds or memory.graph.resolve(node_id) in self.grounds


def _named_ids(op: PlanOp) -> Iterator[str]:
    yield from op.grounded_in
    if isinstance(op, AddEdge):
        yield op.src
        yield op.dst
    elif isinstance(op, (UpdateNode, RemoveNode)):
        yield op.id
    elif isinstance(op, MergeNodes):
        yield op.keep
        yield from op.absorb


class BoundsCheck:
    """Raise PlanRejectedError ("plan bound: ...") naming the first op a planner may not do."""

    def __init__(
        self,
        memory: TenantMemory,
        plan: UpdatePlan,
        bounds: PlanBounds,
        embedder: Embedder,
        config: PlanBoundsConfig,
    ) -> None:
        self.memory = memory
        self.plan = plan
        self.bounds = bounds
        self.embedder = embedder
        self.config = config
        self.new_nodes = {op.ref: op for op in plan.ops if isinstance(op, AddNode)}
        self._vectors: dict[str, Vector] = {}

    def run(self) -> None:
        if not self.config.enabled:
            return
        for index, op in enumerate(self.plan.ops):
            self._grounded(op, index)
            if isinstance(op, RemoveNode) and op.id not in self.new_nodes:
                self._refuse(
                    f"REMOVE_NODE of {op.id!r}: a plan removes only nodes it created", index
                )
            elif isinstance(op, UpdateNode):
                self._update(op, index)
            elif isinstance(op, MergeNodes):
                self._merge(op, index)
            elif (
                isinstance(op, AddEdge)
                and op.kind == EdgeKind.TRIGGERS
                and self._kind(op.dst) == NodeKind.INTENT
            ):
                self._trigger(op, index)
        for index, op in enumerate(self.plan.ops):
            if isinstance(op, AddNode) and op.kind == NodeKind.INTENT:
                self._new_intent(op, index)

    # ------------------------------------------------------------------ bounds
    def _grounded(self, op: PlanOp, index: int) -> None:
        for ref in _named_ids(op):
            if ref not in self.new_nodes and not self.bounds.allows(self.memory, ref):
                self._refuse(f"{ref!r} is not in this event's context", index)

    def _update(self, op: UpdateNode, index: int) -> None:
        if op.status is not None:
            self._refuse("intent status changes only through the user's API", index)
        if op.id in self.new_nodes:
            return
        node = self.memory.graph.get(op.id)
        if node is None:
            return  # the executor's own validation names the unknown id
        if node.kind == NodeKind.INTENT and op.title is not None and op.title != node.title:
            self._refuse("a planner may not rename an intent", index)
        if op.title is None and op.text is None:
            return
        title = node.title if op.title is None else op.title
        text = node.text if op.text is None else op.text
        new = node_text(title, text)
        if new == node.embed_text:
            return
        old_vec, new_vec = self.embedder.embed([node.embed_text, new])
        score = _cos(old_vec, new_vec)
        if score < self.config.rename_similarity:
            self._refuse(
                f"the new title/text of {op.id!r} is not close to the old one (cosine "
                f"{score:.2f} < {self.config.rename_similarity:.2f})",
                index,
            )

    def _merge(self, op: MergeNodes, index: int) -> None:
        keep = self._vector(op.keep)
        for other in op.absorb:
            node = self.memory.graph.get(other)
            if node is not None and node.kind == NodeKind.INTENT:
                self._refuse("an intent leaves only through the user's API, not a merge", index)
            score = _cos(keep, self._vector(other))
            if score < self.config.merge_similarity:
                self._refuse(
                    f"{other!r} is not similar to {op.keep!r} (cosine {score:.2f} < "
                    f"{self.config.merge_similarity:.2f}); only near-identical nodes merge",
                    index,
                )

    def _trigger(self, op: AddEdge, index: int) -> None:
        score = _cos(self._vector(op.src), self._vector(op.dst))
        if score < self.config.intent_support_similarity:
            self._refuse(
                f"{op.src!r} is unrelated to the intent {op.dst!r} (cosine {score:.2f} < "
                f"{self.config.intent_support_similarity:.2f}); it cannot support it",
                index,
            )

    def _new_intent(self, op: AddNode, index: int) -> None:
        supporters = {
            o.src
            for o in self.plan.ops
            if isinstance(o, AddEdge) and o.kind == EdgeKind.TRIGGERS and o.dst == op.ref
        }
        event_ids = {self.bounds.event_id, self.bounds.event_node_id}
        corroborated = {
            o.dst
            for o in self.plan.ops
            if isinstance(o, AddEdge) and o.kind in _EVENT_EVIDENCE and o.src in event_ids
        }
        if not supporters & corroborated:
            self._refuse(
                f"intent {op.ref!r}: none of its supporting concepts is grounded or reinforced "
                "by this event",
                index,
            )

    # ----------------------------------------------------------------- helpers
    def _kind(self, ref: str) -> NodeKind | None:
        if ref in self.new_nodes:
            return self.new_nodes[ref].kind
        node = self.memory.graph.get(ref)
        return None if node is None else node.kind

    def _vector(self, ref: str) -> Vector:
        if ref in self._vectors:
            return self._vectors[ref]
        if ref in self.new_nodes:
            op = self.new_nodes[ref]
            vector = self.embedder.embed([vector_text(op.kind, op.title, op.text)])[0]
        else:
            node = self.memory.graph.node(ref)
            stored = self.memory.vector(node.id)
            vector = stored if stored is not None else self.embedder.embed([node.vector_text])[0]
        self._vectors[ref] = vector
        return vector

    @staticmethod
    def _refuse(reason: str, index: int) -> None:
        raise PlanRejectedError(f"plan bound: {reason}", index)


def _cos(a: Vector, b: Vector) -> float:
    return float(np.dot(a, b))


def check_bounds(
    memory: TenantMemory,
    plan: UpdatePlan,
    bounds: PlanBounds,
    embedder: Embedder,
    config: PlanBoundsConfig,
) -> None:
    BoundsCheck(memory, plan, bounds, embedder, config).run()


__all__ = ["BoundsCheck", "PlanBounds", "check_bounds"]
