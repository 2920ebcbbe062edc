"""The intent sink contract."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from schemas.intents import IntentMessage


@runtime_checkable
class IntentSink(Protocol):
    """Where intent messages go: `add` each, `flush` to make them durable, `close` at the end."""

    async def add(self, message: IntentMessage) -> None: ...

    async def flush(self) -> None: ...

    async def close(self) -> None: ...


def message_body(message: IntentMessage) -> bytes:
    """The JSON bytes a sink writes or sends for one message."""
    return message.model_dump_json().encode("utf-8")
