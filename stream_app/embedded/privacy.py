"""The embedded hub's privacy and nightly writes (:class:`stream_app.embedded.hub.MemoryHub`
delegates its ``forget_event``, ``forget_tenant``, ``change_layers`` and ``consolidate`` here):
each runs under the tenant's lock, persists its ChangeSet to the store (retrying on a stale
tenant like the hub's own writers), and keeps the derived indexes in step.

Store rows the ChangeSet model does not cover are purged here too: the intent outbox rows of
deleted intents (their messages carry intent titles) and, on a tenant forget, all of its outbox
rows. The tenant's row in ``tenants`` stays (version counter; it holds no content). The local
files (``intents.jsonl``, the dead letters) are rewritten without the deleted content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from connectors.sinks import JsonlSink
from schemas.intents import IntentMessage, IntentStatus, RetractionReason
from stream_app.embedded.files import Scrub, scrub_files
from stream_app.hub.upkeep import intent_statuses, rebuild_derived, retractions, run_night
from stream_app.settings import DEADLETTER_FILE, INTENTS_FILE, WEBHOOK_DEADLETTER_FILE
from topologies import privacy
from topologies.memory import ChangeSet, TenantMemory
from topologies.nightly.run import NightlyReport
from topologies.privacy import DeletionReport

if TYPE_CHECKING:
    from stream_app.embedded.hub import MemoryHub

log = structlog.get_logger(__name__)


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


def _scrub_local(hub: MemoryHub, report: DeletionReport, whole_tenant: bool) -> None:
    """Rewrite DATA_DIR/intents.jsonl (and any other intent log of the hub's outputs) and
    deadletter.jsonl without what the deletion removed."""
    data_dir = hub.store.path.parent
    logs = [data_dir / INTENTS_FILE, data_dir / WEBHOOK_DEADLETTER_FILE]
    logs += [s.path for s in hub.outputs.sinks if isinstance(s, JsonlSink)]
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
    await hub.publish_pending()
    return report


async def forget_event(hub: MemoryHub, tenant: str, event_id: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return privacy.delete_event(memory, event_id, actor=actor, embedder=hub.engine.embedder)

    return await _forget(hub, tenant, op, "event_forgotten", create=True)


async def forget_tenant(hub: MemoryHub, tenant: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return privacy.forget_tenant(memory, actor=actor)

    return await _forget(hub, tenant, op, "tenant_forgotten", create=False)


async def change_layers(
    hub: MemoryHub, tenant: str, changes: dict[str, bool], purge: bool, actor: str
) -> dict[str, bool]:
    await _locked_write(
        hub,
        tenant,
        lambda m: privacy.set_layers(
            m, changes, purge=purge, actor=actor, embedder=hub.engine.embedder
        ),
        lambda c: c,
    )
    return hub.layers(tenant)


async def consolidate(
    hub: MemoryHub, tenant: str, budget_s: float, now: datetime | None = None
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
    await hub.publish_pending()
    return report
