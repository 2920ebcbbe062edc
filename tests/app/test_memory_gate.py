"""The memory gate: a fold's steps run in a worker thread, one at a time, and a read request
never runs while a step does (stream_app/hub/gate.py)."""

from __future__ import annotations

import asyncio
import threading
import time

from stream_app.hub.gate import MemoryGate


async def test_a_step_runs_in_a_worker_thread_and_returns_its_value() -> None:
    gate = MemoryGate()
    assert await gate.offload(threading.get_ident) != threading.get_ident()


async def test_a_read_waits_for_the_step_in_progress_and_the_next_step_for_the_read() -> None:
    gate = MemoryGate()
    timeline: list[str] = []
    step_started = threading.Event()

    def step(name: str) -> None:
        timeline.append(f"{name} starts")
        step_started.set()
        time.sleep(0.05)
        timeline.append(f"{name} ends")

    async def read() -> None:
        await asyncio.to_thread(step_started.wait)
        async with gate.shared():
            timeline.append("read starts")
            await asyncio.sleep(0.05)
            timeline.append("read ends")

    async def fold() -> None:
        await gate.offload(lambda: step("step 1"))
        await asyncio.sleep(0.01)  # the fold yields between steps, as the engine does
        await gate.offload(lambda: step("step 2"))

    await asyncio.gather(fold(), read())
    assert timeline == [
        "step 1 starts",
        "step 1 ends",
        "read starts",
        "read ends",
        "step 2 starts",
        "step 2 ends",
    ]


async def test_a_step_asked_for_while_the_gate_is_held_runs_inline() -> None:
    gate = MemoryGate()
    async with gate.shared():
        assert await gate.offload(threading.get_ident) == threading.get_ident()
        task = asyncio.create_task(gate.offload(threading.get_ident))  # inherits the context
        assert await asyncio.wait_for(task, 5) == threading.get_ident()
