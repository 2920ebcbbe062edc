"""The embedded hub's privacy and nightly writes, in one place (:class:`EmbeddedPrivacy`, which
:class:`stream_app.embedded.hub.MemoryHub` inherits: ``forget`` an event or a tenant,
``change_layers``, ``consolidate``): each runs under the tenant's lock, persists its ChangeSet
to the store (retrying on a stale tenant like the hub's own writers), and keeps the derived
indexes in step.

Store rows the ChangeSet model does not cover are purged here too: the intent outbox rows of
deleted intents (their messages carry intent titles) and, on a tenant forget, all of its outbox
rows. The tenant's row in ``tenants`` stays (version counter; it holds no content). The local
files (``intents.jsonl``, the dead letters) are rewritten without the deleted content.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import structlog

from connectors.sinks import JsonlSink
from schemas.intents import IntentMessage, IntentStatus
from stream_app.embedded.files import Scrub, scrub_files
from stream_app.embedded.outputs import IntentOutputs
from stream_app.embedded.store import Checkpoint, Store
from stream_app.hub.protocol import NIGHTLY_BUDGET_S
from stream_app.hub.upkeep import (
    Deletion,
    Forgetting,
    intent_statuses,
    rebuild_derived,
    retractions,
    run_night,
)
from stream_app.settings import DEADLETTER_FILE, INTENTS_FILE, WEBHOOK_DEADLETTER_FILE
from topologies import privacy
from topologies.engine import FoldEngine
from topologies.memory import ChangeSet, TenantMemory
from topologies.nightly.run import NightlyReport
from topologies.privacy import DeletionReport

log = structlog.get_logger(__name__)
T = TypeVar("T")


class EmbeddedPrivacy(Forgetting):
    """The writes; what they need of the hub is declared below (MemoryHub provides it)."""

    store: Store
    engine: FoldEngine
    outputs: IntentOutputs

    @abstractmethod
    def lock(self, tenant: str) -> asyncio.Lock: ...

    @abstractmethod
    async def retrying(
        self, tenant: str, attempt: Callable[[TenantMemory], Awaitable[T]], *, create: bool = False
    ) -> T: ...

    @abstractmethod
    def persist(
        self,
        tenant: str,
        changes: Sequence[ChangeSet],
        messages: Sequence[IntentMessage] = (),
        checkpoints: Sequence[Checkpoint] = (),
    ) -> None: ...

    @abstractmethod
    async def publish_pending(self) -> None: ...

    @abstractmethod
    def layers(self, tenant: str) -> dict[str, bool]: ...

    # ----------------------------------------------------------------- writes
    async def forget(self, tenant: str, deletion: Deletion) -> DeletionReport:
        """A deletion: the outbox rows of the removed intents are purged and a retraction of
        each is committed with the deletion; the local files are rewritten; the retractions
        go out."""
        statuses: dict[str, IntentStatus] = {}

        def run(memory: TenantMemory) -> DeletionReport:
            statuses.clear()
            statuses.update(intent_statuses(memory))
            return deletion.run(memory)

        def before_persist(report: DeletionReport) -> list[IntentMessage]:
            removed = report.deleted.get("INTENT", [])
            if deletion.reason == "tenant_forgotten":
                self.store.purge_outbox(tenant, None)
            elif removed:
                self.store.purge_outbox(tenant, removed)
            return retractions(report, statuses, deletion.reason)

        report: DeletionReport = await self._locked_write(
            tenant, run, lambda r: r.changes, deletion.creates, before_persist
        )
        self._scrub_local(report, whole_tenant=deletion.reason == "tenant_forgotten")
        await self.engine.offload(self.engine.forget_texts)  # as a fold step: none runs then
        await self.publish_pending()
        return report

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]:
        embedder = self.engine.embedder
        await self._locked_write(
            tenant,
            lambda m: privacy.set_layers(
                m, changes, purge=purge, actor=actor, now=datetime.now(UTC), embedder=embedder
            ),
            lambda c: c,
        )
        if purge:
            await self.engine.offload(self.engine.forget_texts)  # as a fold step: none runs then
        return self.layers(tenant)

    async def consolidate(
        self, tenant: str, budget_s: float = NIGHTLY_BUDGET_S, now: datetime | None = None
    ) -> NightlyReport:
        """One nightly run for the tenant (the runner's idle hook, the CLI, the API)."""

        async def attempt(memory: TenantMemory) -> NightlyReport:
            report = await run_night(self.engine, memory, budget_s, now)
            if report.changes is not None and not report.changes.empty:
                self.persist(tenant, [report.changes], messages=report.messages)
                rebuild_derived(memory)
            return report

        async with self.lock(tenant):
            report = await self.retrying(tenant, attempt)
        await self.publish_pending()
        return report

    # ---------------------------------------------------------------- helpers
    async def _locked_write(
        self,
        tenant: str,
        op: Callable[[TenantMemory], Any],
        changes_of: Callable[[Any], ChangeSet | None],
        create: bool = True,
        before_persist: Callable[[Any], Sequence[IntentMessage]] | None = None,
    ) -> Any:
        """``before_persist(result)`` runs after ``op`` and before the commit; the messages it
        returns are committed with the change (the outbox), so they are delivered at least
        once. Freed pages are zeroed and the WAL emptied after the commit."""

        async def attempt(memory: TenantMemory) -> Any:
            result = op(memory)
            changes = changes_of(result)
            messages = before_persist(result) if before_persist is not None else ()
            if changes is not None and not changes.empty:
                self.persist(tenant, [changes], messages=messages)
                rebuild_derived(memory)
                self.store.scrub()
            return result

        async with self.lock(tenant):
            self.store.secure_delete()
            return await self.retrying(tenant, attempt, create=create)

    def _scrub_local(self, report: DeletionReport, whole_tenant: bool) -> None:
        """Rewrite DATA_DIR/intents.jsonl (and any other intent log of the hub's outputs) and
        deadletter.jsonl without what the deletion removed."""
        data_dir = self.store.path.parent
        logs = [data_dir / INTENTS_FILE, data_dir / WEBHOOK_DEADLETTER_FILE]
        logs += [s.path for s in self.outputs.sinks if isinstance(s, JsonlSink)]
        scrub = Scrub(
            tenant=report.tenant,
            whole_tenant=whole_tenant,
            intent_ids=set(report.deleted.get("INTENT", [])),
            event_ids=set(report.event_ids),
            quotes=report.quotes,
        )
        changed = scrub_files(logs, data_dir / DEADLETTER_FILE, scrub)
        log.info("local_outputs_scrubbed", tenant=report.tenant, lines=sum(changed.values()))
