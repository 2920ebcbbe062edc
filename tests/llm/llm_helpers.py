"""Helpers for the LLM planner tests: plan JSON for the fake server to reply, a checked fold."""

from __future__ import annotations

import json
from typing import Any

from foldmem_testing.fakeserver import new_concept_ops

Rig = Any  # tests/llm/conftest.py Rig (conftest modules are not importable)


def plan_json(*ops: dict[str, Any]) -> str:
    return json.dumps({"ops": list(ops), "notes": ""})


def new_concept(title: str) -> tuple[dict[str, Any], ...]:
    """The two ops of a valid plan: a concept `n1` titled `title`, grounded in the event."""
    return new_concept_ops(title)


async def fold(rig: Rig, event: Any) -> Any:
    """Fold one event through the rig's engine; it must end folded, whatever the server did."""
    memory = rig.memory(event.tenant)
    result = await rig.engine.fold(memory, event)
    assert memory.event_state(event.id) == "folded"  # nothing lost, ever
    return result
