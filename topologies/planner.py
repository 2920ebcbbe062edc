"""The planner protocol and what a planner is given: the event and its assembled context."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeGuard, runtime_checkable

from schemas.events import RawEvent
from schemas.graph import Node, NodeKind
from schemas.plans import UpdatePlan
from topologies.memory import TenantMemory
from topologies.vector_index import Vector

# tenant meta key of the events folded per plan author ("llm", "heuristic", ...): written by
# the engine in each fold's transaction, read by `foldmem status` and GET /llm
PLANNED_BY_KEY = "planned_by"


@dataclass(frozen=True)
class ContextItem:
    """A node selected into the context, with the signals that ranked it."""

    node_id: str
    kind: NodeKind
    title: str
    score: float
    tier: str  # immediate | working | background
    signals: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """The fold's context (docs/DESIGN.md section 3): three tiers of central, recent and
    frequently used nodes."""

    immediate: list[ContextItem] = field(default_factory=list)
    working: list[ContextItem] = field(default_factory=list)
    background: list[ContextItem] = field(default_factory=list)
    knn: dict[str, float] = field(default_factory=dict)  # node id -> cosine to the event

    @property
    def items(self) -> list[ContextItem]:
        return [*self.immediate, *self.working, *self.background]

    def ids(self) -> set[str]:
        return {item.node_id for item in self.items}


@dataclass
class PlanRequest:
    """Input of one planning step. `memory` is read-only for planners.

    A planner that looks nodes up itself (beyond ``context``) notes their ids in ``consulted``:
    a plan may name only the event, its context and these (topologies/plan_bounds.py).
    """

    event: RawEvent
    event_node: Node
    vector: Vector
    context: Context
    memory: TenantMemory
    now: datetime
    consulted: set[str] = field(default_factory=set)


@runtime_checkable
class Planner(Protocol):
    """Turns (event, context) into an UpdatePlan. Must not mutate memory."""

    name: str

    async def plan(self, request: PlanRequest) -> UpdatePlan: ...


@runtime_checkable
class SyncPlanner(Protocol):
    """A planner that can plan without awaiting anything (no model call): the engine may run
    ``plan_sync`` in a worker thread (``FoldEngine.offload``)."""

    name: str

    async def plan(self, request: PlanRequest) -> UpdatePlan: ...

    def plan_sync(self, request: PlanRequest) -> UpdatePlan: ...


def plans_sync(planner: Planner) -> TypeGuard[SyncPlanner]:
    """Can the planner plan without awaiting anything (``isinstance(planner, SyncPlanner)``)?

    A :class:`Planner` has the other members: it is one when it has ``plan_sync``. Asked
    once per event, where the runtime protocol check collects the protocol's members through
    its classes at every call."""
    return getattr(planner, "plan_sync", None) is not None
