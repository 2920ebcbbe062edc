"""Phase 2: per-cluster induction. A deterministic inductor, and an LLM one with the four tools.

Both see a :class:`ClusterContext` (the cluster's facts, its centroid, the nearest existing
schemas and intentions, the concepts its facts' events already feed) and return tool actions.

Deterministic rules:
1. the nearest existing schema at cosine >= ``attach_similarity`` gets the facts as evidence
   (``add_evidence``); otherwise ``create_schema`` named like a concept from the facts' noun
   phrases (``topologies.naming.Namer.label_texts``), described by its most central facts,
   its domain from :func:`topologies.nightly.behaviour.domain_of`;
2. the new schema is ``RELATED_TO`` the concept the cluster's events feed most;
3. when at least ``goal_min_facts`` facts carry goal or deadline language, ``create_intention``
   titled like an intent from those facts (``Namer.title_texts``), supported by the schema and
   the closest other evidenced concept (the executor requires two), with the earliest
   deadline found in the facts (or none); a near-duplicate intention (cosine >=
   ``intent_duplicate``) gets the evidence instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import structlog

from schemas.graph import EdgeKind, Node, NodeKind
from topologies.llm.completer import JsonCompleter
from topologies.llm.prompts import induce_memory
from topologies.llm.prompts.induce_memory import (
    AddEvidence,
    AddGraphEdge,
    CreateIntention,
    CreateSchema,
)
from topologies.memory import TenantMemory
from topologies.naming import Namer
from topologies.nightly.behaviour import domain_of
from topologies.text import find_dates
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

ToolAction = CreateSchema | CreateIntention | AddEvidence | AddGraphEdge

_GOAL = re.compile(
    r"\b(?:deadline|due|submit|submission|goal|aim to|plan to|planning to|need to|have to|must|"
    r"by (?:mon|tue|wed|thu|fri|sat|sun|end of|next|the)\w*|before the|target|launch|exam|"
    r"camera-ready|go-live|cut-?off|finish|deliver)\b",
    re.I,
)


@dataclass(frozen=True)
class InductionConfig:
    attach_similarity: float = 0.75  # centroid vs existing schema: add evidence instead
    goal_min_facts: int = 2
    intent_duplicate: float = 0.85
    support_similarity: float = 0.2  # second supporter of an intention must be this close
    central_facts: int = 3  # facts quoted in a schema's description


@dataclass
class ClusterContext:
    index: int
    facts: list[Node]
    centroid: Vector
    near_schemas: list[tuple[str, float]] = field(default_factory=list)
    near_intents: list[tuple[str, float]] = field(default_factory=list)
    event_concepts: list[tuple[str, int]] = field(default_factory=list)  # concept, shared facts

    @property
    def fact_ids(self) -> list[str]:
        return [f.id for f in self.facts]


def build_context(
    memory: TenantMemory, index: int, fact_ids: list[str], k: int = 5
) -> ClusterContext:
    facts = [memory.graph.node(i) for i in fact_ids]
    fact_index = memory.indexes["FACT"]
    vectors = [v for v in (fact_index.get(i) for i in fact_ids) if v is not None]
    centroid = np.mean(np.stack(vectors), axis=0).astype(np.float32)
    norm = float(np.linalg.norm(centroid))
    centroid = centroid / norm if norm else centroid
    schemas = [
        (i, s)
        for i, s in memory.indexes["CONCEPT"].search(centroid, k * 2)
        if not memory.graph.node(i).core
    ][:k]
    intents = memory.indexes["INTENT"].search(centroid, k)
    fed: dict[str, int] = {}
    for fact in facts:
        for edge in memory.graph.out_edges(fact.id, EdgeKind.DERIVED_FROM):
            for ev_edge in memory.graph.out_edges(edge.dst):
                if ev_edge.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES):
                    target = memory.graph.get(ev_edge.dst)
                    if target is not None and target.kind == NodeKind.CONCEPT and not target.core:
                        fed[target.id] = fed.get(target.id, 0) + 1
    ranked = sorted(fed.items(), key=lambda kv: (-kv[1], kv[0]))
    return ClusterContext(index, facts, centroid, schemas, intents, ranked[:k])


class Inductor(Protocol):
    name: str

    async def propose(
        self, memory: TenantMemory, ctx: ClusterContext, now: datetime
    ) -> list[ToolAction]: ...


class DeterministicInductor:
    name = "nightly-heuristic"

    def __init__(self, config: InductionConfig | None = None, namer: Namer | None = None) -> None:
        self.config = config or InductionConfig()
        self.namer = namer if namer is not None else Namer(None)  # words alone without one

    async def propose(
        self, memory: TenantMemory, ctx: ClusterContext, now: datetime
    ) -> list[ToolAction]:
        return self.actions(memory, ctx, now)

    def actions(self, memory: TenantMemory, ctx: ClusterContext, now: datetime) -> list[ToolAction]:
        cfg = self.config
        texts = [f.text for f in ctx.facts]
        fact_ids = ctx.fact_ids
        actions: list[ToolAction] = []
        schema: str
        if ctx.near_schemas and ctx.near_schemas[0][1] >= cfg.attach_similarity:
            schema = ctx.near_schemas[0][0]
            actions.append(
                AddEvidence(
                    target=schema,
                    evidence=fact_ids,
                    reasoning="cluster close to an existing schema",
                )
            )
        else:
            schema = f"s{ctx.index}"
            label = self.namer.label_texts(texts, self._vectors(memory, ctx.facts))
            central = self._central(memory, ctx)
            actions.append(
                CreateSchema(
                    ref=schema,
                    title=label,
                    category=domain_of(None, texts),
                    description=" | ".join(central),
                    evidence=fact_ids,
                    reasoning=f"{len(fact_ids)} facts cluster together",
                )
            )
            fed = [c for c, _ in ctx.event_concepts if c != schema]
            if fed:
                actions.append(
                    AddGraphEdge(
                        src=schema,
                        dst=fed[0],
                        kind="RELATED_TO",
                        reasoning="the cluster's events feed this concept",
                    )
                )
        goal_facts = [f for f in ctx.facts if _GOAL.search(f.text)]
        if len(goal_facts) >= cfg.goal_min_facts:
            actions.extend(self._intention(memory, ctx, schema, goal_facts, now))
        return actions

    @staticmethod
    def _vectors(memory: TenantMemory, facts: list[Node]) -> np.ndarray | None:
        """The facts' stored vectors (None when one is missing: the namer embeds them)."""
        index = memory.indexes.get(NodeKind.FACT.value)
        rows = [index.get(f.id) if index is not None else None for f in facts]
        if not rows or any(r is None for r in rows):
            return None
        return np.vstack([r for r in rows if r is not None])

    def _central(self, memory: TenantMemory, ctx: ClusterContext) -> list[str]:
        scored = []
        for fact in ctx.facts:
            vec = memory.indexes["FACT"].get(fact.id)
            scored.append((float(np.dot(vec, ctx.centroid)) if vec is not None else 0.0, fact))
        scored.sort(key=lambda sf: (-sf[0], sf[1].id))
        return [f.text[:160] for _, f in scored[: self.config.central_facts]]

    def _intention(
        self,
        memory: TenantMemory,
        ctx: ClusterContext,
        schema: str,
        goal_facts: list[Node],
        now: datetime,
    ) -> list[ToolAction]:
        cfg = self.config
        evidence = [f.id for f in goal_facts]
        if ctx.near_intents and ctx.near_intents[0][1] >= cfg.intent_duplicate:
            return [
                AddEvidence(
                    target=ctx.near_intents[0][0],
                    evidence=evidence,
                    reasoning="same concern as an open intention",
                )
            ]
        second = None
        for concept_id, sim in [*((c, 1.0) for c, _ in ctx.event_concepts), *ctx.near_schemas]:
            node = memory.graph.get(concept_id)
            if concept_id == schema or node is None or sim < cfg.support_similarity:
                continue
            if any(
                e.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
                for e in memory.graph.in_edges(concept_id)
            ):
                second = concept_id
                break
        if second is None:
            return []
        deadlines = sorted(
            d.when
            for f in goal_facts
            for d in find_dates(f.text, f.ts or now)
            if d.deadline and d.when >= now
        )
        title = self.namer.title_texts(
            [f.text for f in goal_facts], self._vectors(memory, goal_facts)
        )
        return [
            CreateIntention(
                ref=f"i{ctx.index}",
                title=title,
                description=" | ".join(f.text[:160] for f in goal_facts[:3]),
                category=domain_of(None, [f.text for f in goal_facts]),
                evidence=evidence,
                supporting=[schema, second],
                deadline=deadlines[0] if deadlines else None,
                reasoning=f"{len(goal_facts)} facts carry goal or deadline language",
            )
        ]


class LLMInductor:
    """Induction with an OpenAI-compatible model through ``topologies.llm``'s client."""

    name = "nightly-llm"

    def __init__(self, client: JsonCompleter, max_facts: int = 30) -> None:
        self.client = client
        self.max_facts = max_facts

    def messages(self, memory: TenantMemory, ctx: ClusterContext) -> list[dict[str, str]]:
        facts = [
            {"id": f.id, "text": f.text[:300], "date": f.ts.date().isoformat() if f.ts else None}
            for f in ctx.facts[: self.max_facts]
        ]
        near = [
            {
                "id": i,
                "kind": "schema",
                "title": memory.graph.node(i).title,
                "similarity": round(s, 3),
            }
            for i, s in ctx.near_schemas
        ]
        near += [
            {
                "id": i,
                "kind": "intention",
                "title": memory.graph.node(i).title,
                "similarity": round(s, 3),
            }
            for i, s in ctx.near_intents
        ]
        user = json.dumps(
            {"cluster": ctx.index, "facts": facts, "nearest": near}, ensure_ascii=False
        )
        return [
            {"role": "system", "content": induce_memory.SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]

    async def propose(
        self, memory: TenantMemory, ctx: ClusterContext, now: datetime
    ) -> list[ToolAction]:
        reply = await self.client.complete_json(
            self.messages(memory, ctx),
            induce_memory.TASK,
            induce_memory.ActionList.model_json_schema(),
            log_ctx={"tenant": memory.tenant, "cluster": ctx.index},
        )
        data = getattr(reply, "data", reply)
        return list(induce_memory.ActionList.model_validate(data).actions)
