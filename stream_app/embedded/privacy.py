"""Hub-level privacy and nightly operations shared by the API (api_privacy) and the CLI
(cli_privacy): each runs under the tenant's lock, persists its ChangeSet to the store (retrying
on a stale tenant like the hub's own writers), and keeps the derived indexes in step.

Store rows the ChangeSet model does not cover are purged here too: the intent outbox rows of
deleted intents (their messages carry intent titles) and, on a tenant forget, all of its outbox
rows. The tenant's row in ``tenants`` stays (version counter; it holds no content).

Shared with the Kafka worker (stream_app.kafka.worker): :class:`PrivacyOps`, the writes the API's
privacy routes need (:class:`EmbeddedOps` here over a MemoryHub, the worker's ``KafkaHub``
over its changelogged state); :func:`run_night`, one nightly pass on a memory; and
:class:`NightlySchedule`, the rule deciding which idle tenants are due a nightly run.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import structlog

from schemas.errors import FoldmemError, NotFoundError
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus, RetractionReason
from stream_app.embedded.hub import MemoryHub
from stream_app.settings import DEADLETTER_FILE, INTENTS_FILE, WEBHOOK_DEADLETTER_FILE
from topologies.entities import rebuild_entity_index
from topologies.memory import ChangeSet, TenantMemory
from topologies.nightly.induce import LLMInductor
from topologies.nightly.run import NightlyReport, run_nightly, run_nightly_async
from topologies.privacy import (
    DeletionReport,
    delete_event,
    export_tenant,
    forget_tenant,
    set_layers,
)

log = structlog.get_logger(__name__)
NIGHTLY_EVERY_S = 20 * 3600.0  # at most one idle-triggered nightly run per tenant per 20 h
NIGHTLY_BUDGET_S = 60.0


class PrivacyOps(Protocol):
    """The writes behind the privacy and nightly routes (``stream_app.api.privacy``)."""

    async def forget_event(self, tenant: str, event_id: str, actor: str) -> DeletionReport: ...

    async def forget_tenant(self, tenant: str, actor: str) -> DeletionReport: ...

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]: ...

    async def consolidate(self, tenant: str, budget_s: float) -> NightlyReport: ...


def rebuild_derived(memory: TenantMemory) -> None:
    """Derived in-memory indexes a privacy or nightly write can leave behind (entity index)."""
    rebuild_entity_index(memory)


async def _locked_write(
    hub: MemoryHub,
    tenant: str,
    op: Callable[[TenantMemory], Any],
    changes_of: Callable[[Any], ChangeSet | None],
    create: bool = True,
    before_persist: Callable[[Any], Sequence[IntentMessage]] | None = None,
) -> Any:
    """``before_persist(result)`` runs after ``op`` and before the commit; the messages it
    returns are committed with the change (the outbox), so they are delivered at least once."""

    async def attempt(memory: TenantMemory) -> Any:
        result = op(memory)
        changes = changes_of(result)
        messages = before_persist(result) if before_persist is not None else ()
        if changes is not None and not changes.empty:
            hub.persist(tenant, [changes], messages=messages)
            rebuild_derived(memory)
            hub.store.scrub()
        return result

    async with hub.lock(tenant):
        hub.store.secure_delete()
        return await hub.retrying(tenant, attempt, create=create)


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


def _scrub_local(hub: MemoryHub, report: DeletionReport, whole_tenant: bool) -> None:
    """Rewrite DATA_DIR/intents.jsonl (and any other intent log of the hub's outputs) and
    deadletter.jsonl without what the deletion removed."""
    from stream_app.embedded.files import Scrub, scrub_files
    from stream_app.outbox.outputs import JsonlFileOutput

    data_dir = hub.store.path.parent
    logs = [data_dir / INTENTS_FILE, data_dir / WEBHOOK_DEADLETTER_FILE]
    logs += [o.path for o in hub.outputs if isinstance(o, JsonlFileOutput)]
    scrub = Scrub(
        tenant=report.tenant,
        whole_tenant=whole_tenant,
        intent_ids=set(report.deleted.get("INTENT", [])),
        event_ids=set(report.event_ids),
        quotes=report.quotes,
    )
    changed = scrub_files(logs, data_dir / DEADLETTER_FILE, scrub)
    log.info("local_outputs_scrubbed", tenant=report.tenant, lines=sum(changed.values()))


async def _forget(
    hub: MemoryHub,
    tenant: str,
    op: Callable[[TenantMemory], DeletionReport],
    reason: RetractionReason,
    create: bool,
) -> DeletionReport:
    """A deletion: the outbox rows of the removed intents are purged and a retraction of each
    is committed with the deletion; the local files are rewritten; the retractions go out."""
    statuses: dict[str, IntentStatus] = {}

    def run(memory: TenantMemory) -> DeletionReport:
        statuses.clear()
        statuses.update(intent_statuses(memory))
        return op(memory)

    def before_persist(report: DeletionReport) -> list[IntentMessage]:
        removed = report.deleted.get("INTENT", [])
        if reason == "tenant_forgotten":
            hub.store.purge_outbox(tenant, None)
        elif removed:
            hub.store.purge_outbox(tenant, removed)
        return retractions(report, statuses, reason)

    report: DeletionReport = await _locked_write(
        hub, tenant, run, lambda r: r.changes, create=create, before_persist=before_persist
    )
    _scrub_local(hub, report, whole_tenant=reason == "tenant_forgotten")
    hub.publish_pending()
    return report


async def forget_event(hub: MemoryHub, tenant: str, event_id: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return delete_event(memory, event_id, actor=actor, embedder=hub.engine.embedder)

    return await _forget(hub, tenant, op, "event_forgotten", create=True)


async def forget_whole_tenant(hub: MemoryHub, tenant: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return forget_tenant(memory, actor=actor)

    return await _forget(hub, tenant, op, "tenant_forgotten", create=False)


async def change_layers(
    hub: MemoryHub, tenant: str, changes: dict[str, bool], purge: bool, actor: str
) -> dict[str, bool]:
    await _locked_write(
        hub,
        tenant,
        lambda m: set_layers(m, changes, purge=purge, actor=actor, embedder=hub.engine.embedder),
        lambda c: c,
    )
    from topologies.privacy import layers

    return layers(hub.view(tenant))


def export(hub: MemoryHub, tenant: str) -> dict[str, Any]:
    return export_tenant(hub.view(tenant))


def llm_inductor(engine: Any) -> LLMInductor | None:
    """The nightly LLM inductor, on the LLM planner's client when one is configured."""
    client = getattr(engine.planner, "client", None)
    return LLMInductor(client) if client is not None and hasattr(client, "complete_json") else None


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


async def consolidate(
    hub: MemoryHub, tenant: str, budget_s: float = NIGHTLY_BUDGET_S, now: datetime | None = None
) -> NightlyReport:
    """One nightly run for the tenant (the embedded runner's idle hook and the CLI call this)."""

    async def attempt(memory: TenantMemory) -> NightlyReport:
        report = await run_night(hub.engine, memory, budget_s, now)
        if report.changes is not None and not report.changes.empty:
            hub.persist(tenant, [report.changes], messages=report.messages)
            rebuild_derived(memory)
        return report

    async with hub.lock(tenant):
        report = await hub.retrying(tenant, attempt)
    hub.publish_pending()
    return report


@dataclass
class NightlySchedule:
    """Which tenants are due an idle-triggered nightly run (the embedded runner's sweep loop
    and the Kafka worker's sweep timer both ask it): a tenant is due when it folded something,
    folded nothing since the previous look (it is idle), and no nightly run was started for it
    by this process for ``every_s`` seconds of wall clock."""

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


_SCHEDULES: weakref.WeakKeyDictionary[MemoryHub, NightlySchedule] = weakref.WeakKeyDictionary()


async def nightly_if_due(
    hub: MemoryHub,
    *,
    every_s: float = NIGHTLY_EVERY_S,
    budget_s: float = NIGHTLY_BUDGET_S,
    wall: Callable[[], float] | None = None,
) -> dict[str, NightlyReport]:
    """The embedded runner's idle hook (called from its periodic sweep loop): a nightly run
    for every tenant of the hub that :class:`NightlySchedule` finds due."""
    schedule = _SCHEDULES.get(hub)
    if schedule is None:
        schedule = _SCHEDULES[hub] = NightlySchedule()
    schedule.every_s = every_s
    schedule.wall = wall or time.time

    async def run(tenant: str) -> NightlyReport:
        return await consolidate(hub, tenant, budget_s)

    return await schedule.run_due(hub.tenants(), hub.view, run)


class EmbeddedOps:
    """:class:`PrivacyOps` over the embedded hub (SQLite store)."""

    def __init__(self, hub: MemoryHub) -> None:
        self.hub = hub

    async def forget_event(self, tenant: str, event_id: str, actor: str) -> DeletionReport:
        return await forget_event(self.hub, tenant, event_id, actor)

    async def forget_tenant(self, tenant: str, actor: str) -> DeletionReport:
        return await forget_whole_tenant(self.hub, tenant, actor)

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]:
        return await change_layers(self.hub, tenant, changes, purge, actor)

    async def consolidate(self, tenant: str, budget_s: float) -> NightlyReport:
        return await consolidate(self.hub, tenant, budget_s)
