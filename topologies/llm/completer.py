"""What an LLM task outside the planner needs from a client: one JSON completion against a
schema (``topologies.llm.client.LLMClient`` provides it; tests pass fakes). No imports of the
client here, so fact extraction and the nightly inductor stay light to import."""

from __future__ import annotations

from typing import Any, Protocol


class JsonCompleter(Protocol):
    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
    ) -> Any: ...
