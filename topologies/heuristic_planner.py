"""The heuristic planner (no LLM). STUB: being implemented."""

from __future__ import annotations

from schemas.plans import UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.planner import PlanRequest


class HeuristicPlanner:
    name = "heuristic"

    def __init__(self, embedder: Embedder, config: EngineConfig) -> None:
        self.embedder = embedder
        self.config = config

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        return UpdatePlan(planner=self.name)
