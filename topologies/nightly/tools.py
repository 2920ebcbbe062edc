"""The induction agent's four tools (DCPM Phase 2) and their translation to an UpdatePlan.

``create_schema`` / ``create_intention`` / ``add_evidence`` / ``add_edge`` are the only actions
an inductor (LLM or deterministic) can emit. :func:`actions_to_plan` turns one cluster's actions
into a single UpdatePlan that the PlanExecutor validates as a whole before writing anything:
evidence is restricted to the cluster's fact ids, targets must exist or be refs made earlier in
the same actions, and disabled layers drop their actions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.graph import EdgeKind, NodeKind
from schemas.limits import MAX_PLAN_OPS
from schemas.plans import AddEdge, AddNode, PlanOp, UpdatePlan
from topologies.memory import TenantMemory

MAX_EVIDENCE = 48  # evidence edges per node and action (plans hold at most 128 ops)
_TOOL_EDGES = Literal["PART_OF", "CAUSES", "TRIGGERS", "RELATED_TO"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", max_length=500)


class CreateSchema(_Action):
    tool: Literal["create_schema"] = "create_schema"
    ref: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,32}$")
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=1000)
    category: str = Field(default="general", max_length=64)
    evidence: list[str] = Field(default_factory=list, max_length=200)


class CreateIntention(_Action):
    tool: Literal["create_intention"] = "create_intention"
    ref: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,32}$")
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=1000)
    category: str = Field(default="general", max_length=64)
    evidence: list[str] = Field(default_factory=list, max_length=200)
    supporting: list[str] = Field(default_factory=list, max_length=8)  # schema refs or ids
    deadline: datetime | None = None


class AddEvidence(_Action):
    tool: Literal["add_evidence"] = "add_evidence"
    target: str = Field(min_length=1, max_length=128)
    evidence: list[str] = Field(default_factory=list, max_length=200)


class AddGraphEdge(_Action):
    tool: Literal["add_edge"] = "add_edge"
    src: str = Field(min_length=1, max_length=128)
    dst: str = Field(min_length=1, max_length=128)
    kind: _TOOL_EDGES = "RELATED_TO"


Action = Annotated[
    CreateSchema | CreateIntention | AddEvidence | AddGraphEdge, Field(discriminator="tool")
]


class ActionList(BaseModel):
    """What the LLM inductor must answer: the tool calls, in emission order."""

    model_config = ConfigDict(extra="ignore")

    actions: list[Action] = Field(default_factory=list, max_length=16)


def actions_to_plan(
    memory: TenantMemory,
    actions: list[CreateSchema | CreateIntention | AddEvidence | AddGraphEdge],
    cluster_facts: list[str],
    *,
    concepts: bool = True,
    intents: bool = True,
    planner: str = "nightly",
) -> UpdatePlan:
    allowed = set(cluster_facts)
    refs: dict[str, NodeKind] = {}
    ops: list[PlanOp] = []

    def known(target: str) -> bool:
        return target in refs or memory.graph.get(target) is not None

    def ground(target: str, evidence: list[str], reasoning: str) -> None:
        for fact in list(dict.fromkeys(evidence))[:MAX_EVIDENCE]:
            if fact in allowed:
                ops.append(
                    AddEdge(src=fact, dst=target, kind=EdgeKind.GROUNDS, reasoning=reasoning[:200])
                )

    def create(
        action: CreateSchema | CreateIntention,
        kind: NodeKind,
        attrs: dict[str, object],
        **extra: Any,
    ) -> None:
        refs[action.ref] = kind
        ops.append(
            AddNode(
                ref=action.ref,
                kind=kind,
                title=action.title,
                text=action.description,
                category=action.category[:64],
                attrs=attrs,
                reasoning=action.reasoning,
                **extra,
            )
        )

    for action in actions:
        if isinstance(action, CreateSchema):
            if not concepts or action.ref in refs:
                continue
            create(action, NodeKind.CONCEPT, {"schema": True, "origin": planner})
            ground(action.ref, action.evidence, "schema evidence")
        elif isinstance(action, CreateIntention):
            supporters = [s for s in dict.fromkeys(action.supporting) if known(s)]
            if not intents or action.ref in refs or len(supporters) < 2:
                continue
            create(action, NodeKind.INTENT, {"origin": planner}, deadline=action.deadline)
            ground(action.ref, action.evidence, "intention evidence")
            for supporter in supporters:
                ops.append(AddEdge(src=supporter, dst=action.ref, kind=EdgeKind.TRIGGERS))
            if action.deadline is not None:
                time_ref = f"{action.ref}_t"
                ops.append(
                    AddNode(
                        ref=time_ref,
                        kind=NodeKind.TIME,
                        title=action.deadline.date().isoformat(),
                        deadline=action.deadline,
                    )
                )
                ops.append(AddEdge(src=time_ref, dst=action.ref, kind=EdgeKind.DEADLINE_FOR))
        elif isinstance(action, AddEvidence):
            target = memory.graph.resolve(action.target) if action.target not in refs else None
            node = memory.graph.get(target) if target else None
            if action.target in refs:
                ground(action.target, action.evidence, "added evidence")
            elif node is not None and node.kind in (NodeKind.CONCEPT, NodeKind.INTENT):
                ground(node.id, action.evidence, "added evidence")
        elif (
            isinstance(action, AddGraphEdge)
            and known(action.src)
            and known(action.dst)
            and action.src != action.dst
        ):
            ops.append(AddEdge(src=action.src, dst=action.dst, kind=EdgeKind(action.kind)))
    return UpdatePlan(ops=ops[:MAX_PLAN_OPS], planner=planner)
