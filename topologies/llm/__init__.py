"""The LLM planner: UpdatePlans from any OpenAI-compatible model (issue 3). See docs/llm.md.

Names are imported lazily: importing ``topologies.llm.config`` (as stream_app.settings does)
does not pull in the ``openai`` client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from topologies.llm.breaker import BreakerState, CircuitBreaker
    from topologies.llm.client import CapabilityMemory, LLMClient, LLMReply
    from topologies.llm.config import LLMConfig
    from topologies.llm.factory import build_planner, llm_status
    from topologies.llm.planner import LLMPlanner
    from topologies.llm.usage import UsageLedger

_WHERE = {
    "BreakerState": "breaker",
    "CircuitBreaker": "breaker",
    "CapabilityMemory": "client",
    "LLMClient": "client",
    "LLMReply": "client",
    "LLMConfig": "config",
    "build_planner": "factory",
    "llm_status": "factory",
    "LLMPlanner": "planner",
    "UsageLedger": "usage",
}

__all__ = [
    "BreakerState",
    "CapabilityMemory",
    "CircuitBreaker",
    "LLMClient",
    "LLMConfig",
    "LLMPlanner",
    "LLMReply",
    "UsageLedger",
    "build_planner",
    "llm_status",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'topologies.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"topologies.llm.{module}"), name)
