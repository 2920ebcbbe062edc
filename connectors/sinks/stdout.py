"""Print intents, one line each (human-readable or JSON)."""

from __future__ import annotations

import sys
from typing import TextIO

from connectors.sinks.base import message_body
from schemas.intents import IntentMessage


class StdoutSink:
    """One line per intent message on `stream` (default stdout)."""

    def __init__(self, *, json: bool = False, stream: TextIO | None = None) -> None:
        self.json = json
        self.stream = stream

    @property
    def _out(self) -> TextIO:
        return self.stream or sys.stdout

    async def add(self, message: IntentMessage) -> None:
        self._out.write(
            (message_body(message).decode() if self.json else format_line(message)) + "\n"
        )

    async def flush(self) -> None:
        self._out.flush()

    async def close(self) -> None:
        await self.flush()


def format_line(message: IntentMessage) -> str:
    """e.g. `2024-03-01T09:00:00+00:00 alice NEW pending "Sign the lease" deadline=... id=...`."""
    intent = message.intent
    if message.type == "intent.retracted":
        when = message.emitted_at.isoformat()
        return f"{when} {message.tenant} RETRACTED {message.reason} id={intent.id}"
    what = "NEW" if message.type == "intent.created" else "STATUS"
    change = (
        f"{message.previous_status.value}->{intent.status.value}"
        if message.previous_status is not None
        else intent.status.value
    )
    parts = [message.emitted_at.isoformat(), message.tenant, what, change, f'"{intent.title}"']
    if intent.deadline is not None:
        parts.append(f"deadline={intent.deadline.isoformat()}")
    parts.append(f"category={intent.category}")
    parts.append(f"id={intent.id}")
    return " ".join(parts)
