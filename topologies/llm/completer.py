"""What the engine needs from a model client, as protocols: the engine never builds one.

:class:`JsonCompleter` is one JSON completion against a schema; fact extraction, fact
reconciliation and the nightly inductor take one at construction. :class:`ModelClient` is what
the LLM planner takes: a completer that also reports its server policy and counters for
``status()``. The OpenAI-compatible implementation is ``adapters.llm.client.LLMClient``; tests
pass it an ``httpx.MockTransport`` or a fake of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from topologies.llm.config import ServerPolicy, StructuredMode


@dataclass
class LLMReply:
    """One completion: the JSON object (``data``), the raw text and what it cost."""

    data: dict[str, Any]
    text: str
    mode: StructuredMode
    tokens_in: int
    tokens_out: int
    estimated: bool = False  # usage missing from the reply: estimated from characters
    attempts: int = 1
    error: str | None = None  # set when the text held no JSON object (data is then {})
    truncated: bool = False  # the reply stopped at max_output_tokens (finish_reason=length)
    seconds: float = 0.0  # the successful request, from sending to the last token
    extra: dict[str, Any] = field(default_factory=dict)


class JsonCompleter(Protocol):
    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
    ) -> Any: ...


class Capabilities(Protocol):
    def get(self, endpoint: str) -> StructuredMode | None: ...


class ModelClient(Protocol):
    """The LLM planner's client: completions with a grammar, plus what ``status()`` shows."""

    @property
    def policy(self) -> ServerPolicy: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def requests(self) -> int: ...  # HTTP requests sent (all attempts)

    @property
    def cancelled(self) -> int: ...  # streamed requests closed at their deadline

    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
        grammar_schema: dict[str, Any] | None = None,
    ) -> LLMReply: ...

    async def aclose(self) -> None: ...
