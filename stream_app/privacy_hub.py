"""Hub-level privacy and nightly operations shared by the API (api_privacy) and the CLI
(cli_privacy): each runs under the tenant's lock, persists its ChangeSet to the store (retrying
on a stale tenant like the hub's own writers), and keeps the derived indexes in step.

Store rows the ChangeSet model does not cover are purged here too: the intent outbox rows of
deleted intents (their messages carry intent titles) and, on a tenant forget, all of its outbox
rows. The tenant's row in ``tenants`` stays (version counter; it holds no content).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import structlog

from stream_app.hub import MemoryHub
from stream_app.store import StaleTenantError
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
_RETRIES = 3


def _after_write(hub: MemoryHub, memory: TenantMemory, changes: ChangeSet) -> None:
    try:
        from topologies.entities import rebuild_entity_index
    except ImportError:  # pragma: no cover - the entity index is optional
        return
    rebuild_entity_index(memory)


async def _locked_write(
    hub: MemoryHub,
    tenant: str,
    op: Callable[[TenantMemory], Any],
    changes_of: Callable[[Any], ChangeSet | None],
    create: bool = True,
) -> Any:
    async with hub.lock(tenant):
        hub.store.secure_delete()
        for attempt in range(_RETRIES):
            hub.refresh()
            memory = hub.memory(tenant, create=create)
            result = op(memory)
            changes = changes_of(result)
            if changes is None or changes.empty:
                return result
            try:
                hub.persist(tenant, [changes])
            except StaleTenantError:
                if attempt == _RETRIES - 1:
                    raise
                continue
            _after_write(hub, memory, changes)
            hub.store.scrub()
            return result
    raise AssertionError("unreachable")  # pragma: no cover


async def forget_event(hub: MemoryHub, tenant: str, event_id: str, actor: str) -> DeletionReport:
    report: DeletionReport = await _locked_write(
        hub,
        tenant,
        lambda m: delete_event(m, event_id, actor=actor, embedder=hub.engine.embedder),
        lambda r: r.changes,
    )
    intents = report.deleted.get("INTENT", [])
    if intents:
        hub.store.purge_outbox(tenant, intents)
    return report


async def forget_whole_tenant(hub: MemoryHub, tenant: str, actor: str) -> DeletionReport:
    report: DeletionReport = await _locked_write(
        hub, tenant, lambda m: forget_tenant(m, actor=actor), lambda r: r.changes, create=False
    )
    hub.store.purge_outbox(tenant, None)
    return report


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


async def consolidate(
    hub: MemoryHub, tenant: str, budget_s: float = 60.0, now: datetime | None = None
) -> NightlyReport:
    """One nightly run for the tenant (the embedded runner's idle hook and the CLI call this)."""
    async with hub.lock(tenant):
        for attempt in range(_RETRIES):
            hub.refresh()
            memory = hub.memory(tenant, create=False)
            when = now or hub.engine.stream_now(memory)
            inductor = llm_inductor(hub.engine)
            if inductor is None:
                report = run_nightly(hub.engine, memory, when, budget_s)
            else:
                report = await run_nightly_async(hub.engine, memory, when, budget_s, inductor)
            if report.changes is None or report.changes.empty:
                return report
            try:
                hub.persist(tenant, [report.changes], messages=report.messages)
            except StaleTenantError:
                if attempt == _RETRIES - 1:
                    raise
                continue
            _after_write(hub, memory, report.changes)
            break
    hub.publish_pending()
    return report


async def nightly_if_due(
    hub: MemoryHub,
    *,
    every_s: float = 20 * 3600.0,
    budget_s: float = 60.0,
    wall: Callable[[], float] | None = None,
) -> dict[str, NightlyReport]:
    """The embedded runner's idle hook (called from its periodic sweep loop).

    A tenant gets a nightly run when none ran in this process for ``every_s`` seconds and
    it is idle: no event was folded for it since the previous call.
    """
    import time

    clock = wall or time.time
    seen: dict[str, int] = hub.__dict__.setdefault("_nightly_seen", {})
    last: dict[str, float] = hub.__dict__.setdefault("_nightly_last", {})
    done: dict[str, NightlyReport] = {}
    for tenant in hub.tenants():
        memory = hub.view(tenant)
        folded = int(memory.meta.get("events_folded", 0))
        idle = seen.get(tenant) == folded
        seen[tenant] = folded
        if not idle or folded == 0 or clock() - last.get(tenant, float("-inf")) < every_s:
            continue
        try:
            done[tenant] = await consolidate(hub, tenant, budget_s)
        except Exception as exc:  # one tenant's failure must not stop the others
            log.error("nightly_failed", tenant=tenant, error=str(exc))
        last[tenant] = clock()
    return done
