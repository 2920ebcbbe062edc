"""The intent sink contract (the house style of quix-streams' ``BaseSink``: ``add`` then
``flush``): every destination of intent messages implements :class:`Sink`.

``add`` hands one message over (written at once, or buffered); ``flush`` returns once every
message added is at the destination and raises :class:`SinkError` otherwise; a sink never
retries or dead-letters by itself: whoever feeds it (the runtime's outbox) decides that, and
moves its own checkpoint only over what a sink confirmed.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from connectors.errors import ConnectorError
from schemas.intents import IntentMessage


@runtime_checkable
class Sink(Protocol):
    # the destination's stable identity ("stdout", "jsonl:/abs/path", "webhook:https://...");
    # what was delivered to it is recorded under this name
    name: str

    async def add(self, message: IntentMessage) -> None: ...

    async def flush(self) -> None: ...

    async def close(self) -> None: ...


class SinkError(ConnectorError):
    """A message did not reach its destination. ``retryable``: trying again may help (a
    timeout, a 5xx, a full disk), else the destination refused it (a 4xx); ``retry_after``:
    the receiver's hint, in seconds."""

    def __init__(
        self, reason: str, *, retryable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


def message_body(message: IntentMessage) -> bytes:
    """The JSON bytes a sink writes or sends for one message."""
    return message.model_dump_json().encode("utf-8")
