"""Test helpers for the engine tests: a scripted planner, a full state dump, direct plan runs.

The scripted planner implements the Planner protocol deterministically from a script keyed by
RawEvent id, so the executor / consolidation / emergence tests do not depend on the heuristic
planner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, PlanOp, UpdatePlan
from topologies.engine import FoldEngine
from topologies.memory import TenantMemory, event_node_id
from topologies.planner import PlanRequest
from topologies.scope import FoldScope


@dataclass
class Step:
    """What the scripted planner says about one event."""

    concepts: list[str] = field(default_factory=list)  # labels (or node ids): reinforced if
    # they exist; an id stays valid when the namer renames the concept
    category: str | None = None
    deadline: datetime | None = None  # a TIME node ...
    deadline_on: str | None = None  # ... attached to this concept label (default: the event)


class ScriptedPlanner:
    """Planner protocol: existing concept labels are reinforced, new ones created + grounded."""

    name = "scripted"

    def __init__(self, script: dict[str, Step]) -> None:
        self.script = script
        self.calls = 0

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        self.calls += 1
        step = self.script.get(request.event.id)
        if step is None:
            return UpdatePlan(planner=self.name)
        event = request.event_node.id
        concepts = list(request.memory.graph.nodes(NodeKind.CONCEPT))
        existing = {**{n.title: n.id for n in concepts}, **{n.id: n.id for n in concepts}}
        ops: list[PlanOp] = []
        refs: dict[str, str] = {}
        for index, label in enumerate(step.concepts):
            if label in existing:
                refs[label] = existing[label]
                ops.append(AddEdge(src=event, dst=existing[label], kind=EdgeKind.REINFORCES))
            else:
                refs[label] = f"c{index}"
                ops.append(
                    AddNode(
                        ref=f"c{index}", kind=NodeKind.CONCEPT, title=label, category=step.category
                    )
                )
                ops.append(AddEdge(src=event, dst=f"c{index}", kind=EdgeKind.GROUNDS))
        if step.deadline is not None:
            target = refs[step.deadline_on] if step.deadline_on else event
            ops.append(
                AddNode(ref="t", kind=NodeKind.TIME, title="deadline", deadline=step.deadline)
            )
            ops.append(AddEdge(src="t", dst=target, kind=EdgeKind.DEADLINE_FOR))
        return UpdatePlan(ops=ops, planner=self.name)


def dump(memory: TenantMemory) -> dict[str, Any]:
    """Everything a tenant holds, in a comparable form (order-independent)."""
    graph = memory.graph
    return {
        "nodes": {n.id: n.model_dump(mode="json") for n in graph.nodes()},
        "edges": {
            f"{e.src}|{e.dst}|{e.kind.value}": e.model_dump(mode="json") for e in graph.edges()
        },
        "by_kind": {kind.value: sorted(graph.ids(kind)) for kind in NodeKind},
        "aliases": dict(graph.aliases),
        "indexes": {
            name: {i: index.get(i).tolist() for i in sorted(index.ids())}  # type: ignore[union-attr]
            for name, index in memory.indexes.items()
        },
        "meta": dict(memory.meta),
        "events": dict(memory.event_states),
    }


def run_plan(
    engine: FoldEngine,
    memory: TenantMemory,
    event: RawEvent,
    plan: UpdatePlan,
    *,
    consolidate: bool = False,
    emerge: bool = False,
    now: datetime | None = None,
) -> FoldScope:
    """Ingest the event, then apply one plan (and optionally consolidation/emergence) directly."""
    engine.ingest(memory, event)
    node_id = event_node_id(memory.tenant, event.id)
    scope = FoldScope(memory.tenant, event.id, node_id, now or engine.stream_now(memory, event))
    scope.touch(node_id)
    memory.begin()
    try:
        engine.executor.apply(memory, plan, scope)
        if consolidate:
            engine.consolidator.consolidate(memory, scope)
        if emerge:
            engine.emergence.emerge(memory, scope)
        memory.set_event_state(event.id, "folded")
    except BaseException:
        memory.rollback()
        raise
    memory.commit()
    return scope


def concept_id(memory: TenantMemory, title: str) -> str:
    matches = [n.id for n in memory.graph.nodes(NodeKind.CONCEPT) if n.title == title]
    assert len(matches) == 1, f"expected one concept titled {title!r}, found {matches}"
    return matches[0]
