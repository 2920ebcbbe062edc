"""Proactive context assembly (SPEC 2.2). STUB: being implemented."""

from __future__ import annotations

from datetime import datetime

from topologies.config import ContextConfig
from topologies.memory import TenantMemory
from topologies.planner import Context
from topologies.vector_index import Vector


def assemble_context(
    memory: TenantMemory, vector: Vector, event_node_id: str, now: datetime, config: ContextConfig
) -> Context:
    return Context()


def record_access(memory: TenantMemory, context: Context, now: datetime) -> None:
    return None
