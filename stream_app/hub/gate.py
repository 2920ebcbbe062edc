"""The memory gate: a fold's CPU-bound steps run in a worker thread while the event loop
keeps serving, and nothing in the loop reads or writes memory meanwhile.

The embedded hub hands :meth:`MemoryGate.offload` to its engine (``FoldEngine.offload``): a
fold's context assembly, heuristic plan and transaction each run in a thread, one at a time
(exclusive), so the loop answers ``/health`` and accepts requests during a bulk fold instead
of waiting for a fold step. A read request holds the gate shared for its whole duration
(:class:`GateMiddleware`): it waits for at most the step in progress (about ten milliseconds
of CPU), never sees a step half-applied, and no step starts while it runs. Writes do not
hold it: each waits for its tenant's lock (a fold of that tenant keeps it for the batch), and
one tenant's write does not read another tenant's memory. A fold started where the gate is
held runs its steps in the loop, as the gate already keeps the threads out (a context
variable says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from starlette.types import ASGIApp, Receive, Scope, Send

T = TypeVar("T")

_SHARED: contextvars.ContextVar[bool] = contextvars.ContextVar("memory_gate_shared", default=False)


class MemoryGate:
    """Shared holders (requests, in the loop) or one exclusive step (in a thread) at a time.
    Waiting holders go before the next step, so a request waits for one step at most."""

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self._holders = 0
        self._waiting = 0
        self._stepping = False

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._condition:
            self._waiting += 1
            try:
                await self._condition.wait_for(lambda: not self._stepping)
            finally:
                self._waiting -= 1
            self._holders += 1
        token = _SHARED.set(True)
        try:
            yield
        finally:
            _SHARED.reset(token)
            async with self._condition:
                self._holders -= 1
                self._condition.notify_all()

    async def offload(self, step: Callable[[], T]) -> T:
        """Run ``step`` in a worker thread, alone; inline when the caller holds the gate."""
        if _SHARED.get():
            return step()
        async with self._condition:
            await self._condition.wait_for(
                lambda: not self._stepping and not self._holders and not self._waiting
            )
            self._stepping = True
        try:
            return await asyncio.to_thread(step)
        finally:
            async with self._condition:
                self._stepping = False
                self._condition.notify_all()


class GateMiddleware:
    """The requests ``holds(scope)`` says are reads hold the hub's gate shared.

    Only reads: a write waits for the tenant's lock, which a fold keeps for its whole batch
    while its steps wait for the gate, so a write holding the gate would wait forever."""

    def __init__(self, app: ASGIApp, gate: MemoryGate, holds: Callable[[Scope], bool]) -> None:
        self.app = app
        self.gate = gate
        self.holds = holds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.holds(scope):
            await self.app(scope, receive, send)
            return
        async with self.gate.shared():
            await self.app(scope, receive, send)
