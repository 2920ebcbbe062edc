"""What the embedded hub hands committed intent messages to (the outbox's deliveries,
:class:`stream_app.outbox.delivery.Deliveries`), as the hub sees it."""

from __future__ import annotations

import asyncio
from typing import Protocol

from connectors.sinks import Sink


class IntentOutputs(Protocol):
    """Where committed intent messages go (:class:`stream_app.outbox.delivery.Deliveries`):
    ``publish`` after a write, ``run`` in a long-running process, ``close`` at its end."""

    @property
    def sinks(self) -> list[Sink]: ...

    async def publish(self) -> None: ...

    async def run(self, stop: asyncio.Event) -> None: ...

    async def close(self) -> None: ...


class NoOutputs:
    """A hub whose messages stay in the outbox (tests, tools that only read)."""

    @property
    def sinks(self) -> list[Sink]:
        return []

    async def publish(self) -> None:
        return None

    async def run(self, stop: asyncio.Event) -> None:
        await stop.wait()

    async def close(self) -> None:
        return None
