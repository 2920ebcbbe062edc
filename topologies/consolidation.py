"""The four structural debts (SPEC 2.5). STUB: being implemented."""

from __future__ import annotations

from datetime import datetime

from topologies.config import EngineConfig
from topologies.executor import PlanExecutor
from topologies.memory import TenantMemory
from topologies.scope import FoldScope


class Consolidator:
    def __init__(self, executor: PlanExecutor, config: EngineConfig) -> None:
        self.executor = executor
        self.config = config

    def consolidate(self, memory: TenantMemory, scope: FoldScope) -> None:
        return None

    def sweep(self, memory: TenantMemory, now: datetime) -> int:
        return 0
