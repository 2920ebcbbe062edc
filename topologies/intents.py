"""Intent emergence and lifecycle (SPEC 2.6). STUB: being implemented."""

from __future__ import annotations

from schemas.graph import Node
from schemas.intents import Intent, IntentStatus
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.executor import PlanExecutor
from topologies.memory import TenantMemory
from topologies.scope import FoldScope


class IntentEmergence:
    def __init__(self, executor: PlanExecutor, embedder: Embedder, config: EngineConfig) -> None:
        self.executor = executor
        self.embedder = embedder
        self.config = config

    def emerge(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        return []

    def set_status(
        self, memory: TenantMemory, scope: FoldScope, intent_id: str, status: IntentStatus, note: str
    ) -> None:
        node = memory.graph.node(intent_id)
        scope.intent_changed(intent_id, node.status)
        memory.graph.update_node(intent_id, status=status, updated_at=scope.now)


def intent_view(memory: TenantMemory, node: Node) -> Intent:
    assert node.status is not None
    return Intent(
        id=node.id, tenant=node.tenant, title=node.title, description=node.text,
        category=node.category or "general", status=node.status,
        created_at=node.created_at, updated_at=node.updated_at,
    )
