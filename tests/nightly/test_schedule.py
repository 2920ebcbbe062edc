"""NightlySchedule: which idle tenants are due a night, and what stops a round."""

from __future__ import annotations

from schemas.errors import FoldmemError, NotFoundError
from stream_app.hub.upkeep import NightlySchedule
from topologies.memory import TenantMemory


class Unavailable(FoldmemError):
    """Stands for the Kafka worker's StateUnavailableError (a rebalance began)."""


def folded(tenant: str, count: int) -> TenantMemory:
    memory = TenantMemory(tenant, 8)
    memory.meta["events_folded"] = count
    return memory


async def test_an_idle_tenant_is_due_once_per_period_and_a_busy_one_is_not() -> None:
    clock = [0.0]
    schedule = NightlySchedule(every_s=100.0, wall=lambda: clock[0])
    memories = {"idle": folded("idle", 5), "busy": folded("busy", 5)}
    ran: list[str] = []

    async def run(tenant: str) -> object:
        ran.append(tenant)
        return object()

    await schedule.run_due(memories, memories.__getitem__, run)  # type: ignore[arg-type]
    assert ran == []  # first look: idleness is not known yet
    memories["busy"].meta["events_folded"] = 6
    await schedule.run_due(memories, memories.__getitem__, run)  # type: ignore[arg-type]
    assert ran == ["idle"]
    clock[0] = 50.0
    await schedule.run_due(memories, memories.__getitem__, run)  # type: ignore[arg-type]
    assert ran == ["idle", "busy"]  # busy went idle; idle's period is not over
    clock[0] = 140.0
    await schedule.run_due(memories, memories.__getitem__, run)  # type: ignore[arg-type]
    assert ran == ["idle", "busy", "idle"]


async def test_unavailable_state_ends_the_round_without_raising() -> None:
    schedule = NightlySchedule(every_s=0.0, wall=lambda: 0.0)
    asked: list[str] = []

    def view(tenant: str) -> TenantMemory:
        asked.append(tenant)
        if tenant == "gone":
            raise NotFoundError("forgotten")
        raise Unavailable("recovering")

    async def run(tenant: str) -> object:
        raise AssertionError("no night may run while the state is unavailable")

    assert await schedule.run_due(["gone", "a", "b"], view, run) == {}  # type: ignore[arg-type]
    assert asked == ["gone", "a"]  # a missing tenant is skipped; unavailable state stops
