"""run_nightly: one bounded nightly pass over one tenant, in one transaction.

``run_nightly(engine, memory, now, budget_s)`` (deterministic, sync) and
``await run_nightly_async(engine, memory, now, budget_s, inductor)`` (LLM proposals gathered
before the transaction, so no await happens while it is open) both return a
:class:`NightlyReport` whose ``changes`` is the ChangeSet to persist. Phases:

1. fresh facts (FACT nodes not yet evidence of any CONCEPT or INTENT) -> two-stage DBSCAN;
2. per cluster, largest first, until the time budget is spent: induction actions -> one
   UpdatePlan validated and applied by the engine's PlanExecutor (a plan the executor rejects
   falls back to the deterministic inductor's plan, then to nothing). The first cluster is
   always induced, even when clustering spent the whole budget (a slow or loaded machine):
   every night makes progress, and the next one continues with the facts left;
3. if the tenant opted in to core schemas and time is left: the cross-domain sweeper.

The graph is extended, never rebuilt: a later night sees the schemas of the earlier ones
(evidence is attached to them when a new cluster is close) and extends their core schemas.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import structlog

from schemas.errors import FoldmemError, PlanRejectedError
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentMessage
from schemas.plans import AddEdge, AddNode, PlanOp, UpdatePlan
from topologies.engine import FoldEngine
from topologies.memory import ChangeSet, TenantMemory, stable_id
from topologies.nightly.cluster import ClusterConfig, cluster_config_for, two_stage_dbscan
from topologies.nightly.induce import (
    ClusterContext,
    DeterministicInductor,
    InductionConfig,
    Inductor,
    ToolAction,
    build_context,
)
from topologies.nightly.sweeper import SweepConfig, collisions, core_groups, schema_views
from topologies.nightly.tools import actions_to_plan
from topologies.privacy import layers
from topologies.scope import FoldScope

log = structlog.get_logger(__name__)

LAST_RUN_KEY = "nightly.last_run"


class NightlyError(FoldmemError):
    """A nightly run failed; nothing it did was kept."""


@dataclass(frozen=True)
class NightlyConfig:
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    induction: InductionConfig = field(default_factory=InductionConfig)
    sweep: SweepConfig = field(default_factory=SweepConfig)


@dataclass
class NightlyReport:
    tenant: str
    now: datetime
    seconds: float = 0.0
    fresh_facts: int = 0
    clusters: int = 0
    clusters_done: int = 0
    schemas_created: list[str] = field(default_factory=list)
    schemas_extended: list[str] = field(default_factory=list)
    intents_created: list[str] = field(default_factory=list)
    edges_written: int = 0
    plans_rejected: int = 0
    collisions: int = 0
    core_created: list[str] = field(default_factory=list)
    core_extended: list[str] = field(default_factory=list)
    layers: dict[str, bool] = field(default_factory=dict)
    truncated: bool = False  # the time budget ran out before every phase finished
    inductor: str = ""
    changes: ChangeSet | None = None
    messages: list[IntentMessage] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "now": self.now.isoformat(),
            "seconds": round(self.seconds, 3),
            "fresh_facts": self.fresh_facts,
            "clusters": self.clusters,
            "clusters_done": self.clusters_done,
            "schemas_created": len(self.schemas_created),
            "schemas_extended": len(self.schemas_extended),
            "intents_created": len(self.intents_created),
            "edges_written": self.edges_written,
            "plans_rejected": self.plans_rejected,
            "collisions": self.collisions,
            "core_created": len(self.core_created),
            "core_extended": len(self.core_extended),
            "layers": self.layers,
            "truncated": self.truncated,
            "inductor": self.inductor,
        }


def default_config(engine: FoldEngine) -> NightlyConfig:
    """DCPM's parameters, with DBSCAN eps calibrated for the engine's embedder when measured."""
    return NightlyConfig(cluster=cluster_config_for(engine.embedder.model_id))


def fresh_facts(memory: TenantMemory, limit: int) -> list[str]:
    """FACT ids not yet evidence of any CONCEPT or INTENT, most recent ``limit``."""
    graph = memory.graph
    fresh = []
    for node in graph.nodes(NodeKind.FACT):
        used = any(
            e.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
            and (t := graph.get(e.dst)) is not None
            and t.kind in (NodeKind.CONCEPT, NodeKind.INTENT)
            for e in graph.out_edges(node.id)
        )
        if not used and node.id in memory.indexes["FACT"]:
            fresh.append(node)
    fresh.sort(key=lambda n: (n.ts or n.created_at, n.id))
    return [n.id for n in fresh[-limit:]]


def _clusters(memory: TenantMemory, config: ClusterConfig) -> tuple[int, list[list[str]]]:
    ids = fresh_facts(memory, config.max_facts)
    if len(ids) < config.min_samples:
        return len(ids), []
    index = memory.indexes["FACT"]
    matrix = np.stack([index.get(i) for i in ids]).astype(np.float32)  # type: ignore[misc]
    return len(ids), two_stage_dbscan(ids, matrix, config)


def work_tag(kind: str, ids: Iterable[str]) -> str:
    """The tag of a night's piece of work (a cluster, a core group), named by the nodes it works
    on rather than by its position: the ids a night derives from it differ from an earlier
    night's at the same stream time (a truncated night resumed before any new event), which
    would otherwise collide with the nodes that night wrote and roll the whole night back."""
    return stable_id(kind, *sorted(ids), size=6)


class _Night:
    """State of one run inside its transaction."""

    def __init__(
        self,
        engine: FoldEngine,
        memory: TenantMemory,
        now: datetime,
        budget_s: float,
        config: NightlyConfig,
        report: NightlyReport,
    ) -> None:
        self.engine = engine
        self.memory = memory
        self.now = now
        self.deadline = time.perf_counter() + budget_s
        self.config = config
        self.report = report
        self.layers = layers(memory)
        namer = engine.namer
        self.fallback = DeterministicInductor(config.induction, namer)
        self.scopes: list[FoldScope] = []

    def out_of_time(self) -> bool:
        return time.perf_counter() >= self.deadline

    def may_induce(self) -> bool:
        """Whether the night goes on to its next cluster: always to the first one (a night
        that only clustered would leave the same facts, and the same cost, to the next night,
        so a short budget would never write anything), then while time is left."""
        return self.report.clusters_done == 0 or not self.out_of_time()

    def scope(self, tag: str) -> FoldScope:
        scope = FoldScope(
            self.memory.tenant, f"nightly:{self.now.isoformat()}:{tag}", None, self.now
        )
        self.scopes.append(scope)
        return scope

    def apply_plan(self, plan: UpdatePlan, scope: FoldScope) -> bool:
        if not plan.ops:
            return False
        executor = self.engine.executor
        try:
            executor.validate(self.memory, plan, scope)
        except PlanRejectedError as exc:
            self.report.plans_rejected += 1
            log.info("nightly_plan_rejected", tenant=self.memory.tenant, reason=str(exc))
            return False
        applied = executor.apply(self.memory, plan, scope)  # raises -> whole night rolls back
        for ref_op in plan.ops:
            if isinstance(ref_op, AddEdge):
                self.report.edges_written += 1
        for node_id in applied.created:
            kind = self.memory.graph.node(node_id).kind
            if kind == NodeKind.CONCEPT:
                self.report.schemas_created.append(node_id)
            elif kind == NodeKind.INTENT:
                self.report.intents_created.append(node_id)
        self.report.schemas_extended.extend(applied.reinforced_instead.values())
        return True

    def induce(self, ctx: ClusterContext, proposed: list[ToolAction] | None) -> None:
        concepts, intents = self.layers["concepts"], self.layers["intents"]
        scope = self.scope(work_tag("c", ctx.fact_ids))
        if proposed is not None:
            plan = actions_to_plan(
                self.memory,
                proposed,
                ctx.fact_ids,
                concepts=concepts,
                intents=intents,
                planner="nightly-llm",
            )
            if self.apply_plan(plan, scope):
                self._extended(proposed)
                return
        actions = self.fallback.actions(self.memory, ctx, self.now)
        plan = actions_to_plan(
            self.memory,
            actions,
            ctx.fact_ids,
            concepts=concepts,
            intents=intents,
            planner="nightly-heuristic",
        )
        if self.apply_plan(plan, scope):
            self._extended(actions)

    def _extended(self, actions: list[ToolAction]) -> None:
        for action in actions:
            target = getattr(action, "target", None)
            if action.tool == "add_evidence" and target:
                self.report.schemas_extended.append(target)

    def sweep(self) -> None:
        cfg = self.config.sweep
        views = schema_views(self.memory, self.engine.embedder, cfg)
        for view in views:
            node = view.node
            if (
                node.attrs.get("behaviour") != view.behaviour
                or node.attrs.get("domain") != view.domain
            ):
                self.memory.graph.replace_node(
                    node.model_copy(
                        update={
                            "attrs": {
                                **node.attrs,
                                "behaviour": view.behaviour,
                                "domain": view.domain,
                            }
                        }
                    )
                )
        found = collisions(views, cfg)
        self.report.collisions = len(found)
        titles = {v.node.id: v.node.title for v in views}
        for group in core_groups(self.memory, views, found):
            if self.out_of_time():
                self.report.truncated = True
                return
            scope = self.scope(work_tag("core", group.members))
            ops: list[PlanOp] = []
            core = group.existing_core
            if core is None:
                phrase = group.behaviour.removeprefix("The user ").rstrip(".")
                ops.append(
                    AddNode(
                        ref="core",
                        kind=NodeKind.CONCEPT,
                        title=f"Core pattern: {phrase}"[:120],
                        text=(
                            f"Across {', '.join(group.domains)}: {group.behaviour} Member schemas: "
                            + "; ".join(titles[m] for m in group.members)
                        )[:2000],
                        category="core",
                        attrs={
                            "core_schema": True,
                            "behaviour": group.behaviour,
                            "domains": group.domains,
                            "origin": "nightly-sweeper",
                        },
                        reasoning=f"{len(group.members)} schemas collide across {group.domains}",
                    )
                )
                target = "core"
            else:
                target = core
            for member in group.members:
                if core is None or self.memory.graph.edge(member, core, EdgeKind.PART_OF) is None:
                    ops.append(
                        AddEdge(
                            src=member,
                            dst=target,
                            kind=EdgeKind.PART_OF,
                            reasoning="cross-domain collision",
                        )
                    )
            if not self.apply_plan(UpdatePlan(ops=ops, planner="nightly-sweeper"), scope):
                continue
            if core is None:
                core_id = scope.ref_ids.get("core")
                if core_id and core_id in self.report.schemas_created:
                    self.report.schemas_created.remove(core_id)
                    self.memory.graph.update_node(core_id, core=True)
                    self.report.core_created.append(core_id)
            elif len(ops):
                self.report.core_extended.append(core)


def _prepare(memory: TenantMemory, config: NightlyConfig) -> tuple[int, list[ClusterContext]]:
    count, clusters = _clusters(memory, config.cluster)
    return count, [build_context(memory, i, ids) for i, ids in enumerate(clusters)]


def _run(
    engine: FoldEngine,
    memory: TenantMemory,
    now: datetime,
    budget_s: float,
    config: NightlyConfig,
    proposals: dict[int, list[ToolAction]] | None,
    contexts: tuple[int, list[ClusterContext]] | None,
    inductor: str,
) -> NightlyReport:
    started = time.perf_counter()
    report = NightlyReport(memory.tenant, now, inductor=inductor)
    try:
        with memory.transaction() as changes:
            night = _Night(engine, memory, now, budget_s, config, report)
            report.layers = dict(night.layers)
            if contexts is not None:
                report.fresh_facts, ctxs = contexts
                clusters = [c.fact_ids for c in ctxs]
            else:
                report.fresh_facts, clusters = _clusters(memory, config.cluster)
            report.clusters = len(clusters)
            if night.layers["concepts"] or night.layers["intents"]:
                for index, fact_ids in enumerate(clusters):
                    if not night.may_induce():
                        report.truncated = True
                        break
                    # rebuilt per cluster: it sees the schemas this night already wrote
                    ctx = build_context(memory, index, [f for f in fact_ids if f in memory.graph])
                    night.induce(ctx, (proposals or {}).get(index))
                    report.clusters_done += 1
            if night.layers["core_schemas"] and night.layers["concepts"]:
                if night.out_of_time():
                    report.truncated = True
                else:
                    night.sweep()
            report.seconds = time.perf_counter() - started
            memory.set_meta(LAST_RUN_KEY, {"now": now.isoformat(), **report.summary()})
    except Exception as exc:
        log.error("nightly_failed", tenant=memory.tenant, error=str(exc))
        raise NightlyError(f"nightly run for {memory.tenant!r} failed: {exc}") from exc
    report.changes = changes
    for scope in night.scopes:
        report.messages.extend(engine.intent_messages(memory, scope))
    log.info("nightly_done", **report.summary())
    return report


def run_nightly(
    engine: FoldEngine,
    memory: TenantMemory,
    now: datetime,
    budget_s: float = 30.0,
    config: NightlyConfig | None = None,
) -> NightlyReport:
    """One deterministic nightly pass (no LLM), bounded by ``budget_s`` seconds of work."""
    return _run(
        engine,
        memory,
        now,
        budget_s,
        config or default_config(engine),
        None,
        None,
        "nightly-heuristic",
    )


async def run_nightly_async(
    engine: FoldEngine,
    memory: TenantMemory,
    now: datetime,
    budget_s: float = 120.0,
    inductor: Inductor | None = None,
    config: NightlyConfig | None = None,
) -> NightlyReport:
    """Like :func:`run_nightly`, with an (LLM) inductor consulted before the transaction."""
    cfg = config or default_config(engine)
    if inductor is None:
        return run_nightly(engine, memory, now, budget_s, cfg)
    deadline = time.perf_counter() + budget_s
    contexts = _prepare(memory, cfg)
    proposals: dict[int, list[ToolAction]] = {}
    for ctx in contexts[1]:
        if time.perf_counter() >= deadline:
            break
        try:
            proposals[ctx.index] = await inductor.propose(memory, ctx, now)
        except Exception as exc:  # the deterministic inductor takes over for this cluster
            log.warning(
                "nightly_induction_failed", tenant=memory.tenant, cluster=ctx.index, error=str(exc)
            )
    remaining = max(0.0, deadline - time.perf_counter())
    return _run(engine, memory, now, remaining, cfg, proposals, contexts, inductor.name)
