"""What both hubs' writers share beyond the engine: the nightly schedule and pass, and what a
deletion is (:class:`Deletion`, :class:`Forgetting`: the two forgets of the Hub contract over a
hub's own ``forget``), with its bookkeeping (the intents it retracts, the derived indexes it
leaves).

The embedded runner's sweep loop and the Kafka worker's sweep timer ask the same
:class:`NightlySchedule` which idle tenants are due a nightly run.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

from schemas.errors import FoldmemError, NotFoundError
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus, RetractionReason
from topologies import privacy
from topologies.embedding import Embedder
from topologies.entities import rebuild_entity_index
from topologies.memory import TenantMemory
from topologies.nightly.induce import LLMInductor
from topologies.nightly.run import NightlyReport, run_nightly, run_nightly_async
from topologies.privacy import DeletionReport

log = structlog.get_logger(__name__)
NIGHTLY_EVERY_S = 20 * 3600.0  # at most one idle-triggered nightly run per tenant per 20 h


def rebuild_derived(memory: TenantMemory) -> None:
    """Derived in-memory indexes a privacy or nightly write can leave behind (entity index)."""
    rebuild_entity_index(memory)


def intent_statuses(memory: TenantMemory) -> dict[str, IntentStatus]:
    """Each intent's status now (a retraction names the last one)."""
    return {n.id: n.status for n in memory.graph.nodes(NodeKind.INTENT) if n.status is not None}


def retractions(
    report: DeletionReport, statuses: dict[str, IntentStatus], reason: RetractionReason
) -> list[IntentMessage]:
    """One ``intent.retracted`` message per intent the deletion removed."""
    at = datetime.now(UTC)
    return [
        IntentMessage.retraction(report.tenant, intent_id, statuses[intent_id], reason, at)
        for intent_id in sorted(report.deleted.get("INTENT", []))
        if intent_id in statuses
    ]


@dataclass(frozen=True)
class Deletion:
    """What a forget does to a tenant's memory, and the reason its retractions give.
    ``creates``: a tenant this hub never saw gets an empty memory (an event id is tombstoned
    all the same) instead of NotFoundError."""

    run: Callable[[TenantMemory], DeletionReport]
    reason: RetractionReason
    creates: bool

    @classmethod
    def of_event(cls, event_id: str, actor: str, embedder: Embedder) -> Deletion:
        def run(memory: TenantMemory) -> DeletionReport:
            return privacy.delete_event(
                memory, event_id, actor=actor, now=datetime.now(UTC), embedder=embedder
            )

        return cls(run, "event_forgotten", creates=True)

    @classmethod
    def of_tenant(cls, actor: str) -> Deletion:
        def run(memory: TenantMemory) -> DeletionReport:
            return privacy.forget_tenant(memory, actor=actor, now=datetime.now(UTC))

        return cls(run, "tenant_forgotten", creates=False)


class Forgetting(ABC):
    """``forget_event`` and ``forget_tenant`` of the Hub contract, over the hub's ``forget``."""

    engine: Any

    @abstractmethod
    async def forget(self, tenant: str, deletion: Deletion) -> DeletionReport:
        """Run the deletion under the tenant's lock, write it durably, retract its intents."""

    async def forget_event(self, tenant: str, event_id: str, actor: str) -> DeletionReport:
        return await self.forget(tenant, Deletion.of_event(event_id, actor, self.engine.embedder))

    async def forget_tenant(self, tenant: str, actor: str) -> DeletionReport:
        return await self.forget(tenant, Deletion.of_tenant(actor))


def llm_inductor(engine: Any) -> LLMInductor | None:
    """The nightly LLM inductor the engine was built with (None: deterministic induction)."""
    inductor: LLMInductor | None = engine.inductor
    return inductor


async def run_night(
    engine: Any, memory: TenantMemory, budget_s: float, now: datetime | None = None
) -> NightlyReport:
    """One nightly pass over a memory at its stream clock (the caller holds the tenant's lock
    and persists ``report.changes``, then publishes ``report.messages``)."""
    when = now or engine.stream_now(memory)
    inductor = llm_inductor(engine)
    if inductor is None:
        return run_nightly(engine, memory, when, budget_s)
    return await run_nightly_async(engine, memory, when, budget_s, inductor)


@dataclass
class NightlySchedule:
    """Which tenants are due an idle-triggered nightly run: a tenant is due when it folded
    something, folded nothing since the previous look (it is idle), and no nightly run was
    started for it by this process for ``every_s`` seconds of wall clock."""

    every_s: float = NIGHTLY_EVERY_S
    wall: Callable[[], float] = time.time
    seen: dict[str, int] = field(default_factory=dict)  # events folded at the previous look
    last: dict[str, float] = field(default_factory=dict)  # wall clock of the last run

    def due(self, tenant: str, memory: TenantMemory) -> bool:
        folded = int(memory.meta.get("events_folded", 0))
        idle = self.seen.get(tenant) == folded
        self.seen[tenant] = folded
        return (
            idle
            and folded > 0
            and self.wall() - self.last.get(tenant, float("-inf")) >= self.every_s
        )

    async def run_due(
        self,
        tenants: Iterable[str],
        view: Callable[[str], TenantMemory],
        run: Callable[[str], Awaitable[NightlyReport]],
    ) -> dict[str, NightlyReport]:
        """Run ``run(tenant)`` for each due tenant; one tenant's failure is logged and does
        not stop the others (it is not retried before ``every_s`` either)."""
        done: dict[str, NightlyReport] = {}
        for tenant in tenants:
            try:
                memory = view(tenant)
            except NotFoundError:  # gone since it was listed (forgotten, or moved away)
                self.seen.pop(tenant, None)
                continue
            except FoldmemError as exc:  # state unavailable (a rebalance began): next sweep
                log.warning("nightly_skipped", tenant=tenant, reason=str(exc))
                break
            if not self.due(tenant, memory):
                continue
            self.last[tenant] = self.wall()
            try:
                done[tenant] = await run(tenant)
            except Exception as exc:  # one tenant's failure must not stop the others
                log.error(
                    "nightly_failed", tenant=tenant, error=str(exc), error_type=type(exc).__name__
                )
        return done
