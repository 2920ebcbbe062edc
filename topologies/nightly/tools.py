"""The induction agent's four tools and their translation to an UpdatePlan.

``create_schema`` / ``create_intention`` / ``add_evidence`` / ``add_edge`` are the only actions
an inductor (LLM or deterministic) can emit. :func:`actions_to_plan` turns one cluster's actions
into a single UpdatePlan that the PlanExecutor validates as a whole before writing anything:
evidence is restricted to the cluster's fact ids, targets must exist or be refs made earlier in
the same actions, and disabled layers drop their actions. The tools' models (what the LLM
inductor is asked to answer) are in ``topologies.llm.prompts.induce_memory``.
"""

from __future__ import annotations

from typing import Any

from schemas.graph import EdgeKind, NodeKind
from schemas.limits import MAX_PLAN_OPS
from schemas.plans import AddEdge, AddNode, PlanOp, UpdatePlan
from topologies.llm.prompts.induce_memory import (
    AddEvidence,
    AddGraphEdge,
    CreateIntention,
    CreateSchema,
)
from topologies.memory import TenantMemory

MAX_EVIDENCE = 48  # evidence edges per node and action (plans hold at most 128 ops)


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
