"""MemoryHub: the embedded mode's :class:`stream_app.hub.Hub`, the tenants' memories over one
SQLite store, shared by the runner, the API and the CLI.

- Writers (fold, intent status, sweep) hold the tenant's ``asyncio.Lock``; a fold persists
  its ingest ChangeSet before planning and its fold ChangeSet (event state "folded", intent
  messages, source offsets) in one store transaction.
- Readers run synchronously inside the event loop (``async def`` endpoints), between the
  writers' awaits, so they see committed state without taking the lock. A fold's CPU-bound
  steps run in a worker thread (``FoldEngine.offload`` = ``MemoryGate.offload``) while the
  loop serves ``/health``; every other request holds the gate, so it runs between two steps
  (stream_app/hub/gate.py).
- Another process writing the same store (``foldmem intent resolve`` or ``foldmem ingest``
  next to ``foldmem run``, or ``foldmem serve`` next to a runner) takes turns with this one
  through the tenant's lock file (:mod:`stream_app.embedded.interlock`, held for a whole write); its
  commits are detected by the store's data version and changed tenants are reloaded. A write
  based on a stale memory (a writer without the lock) is refused by the store
  (StaleTenantError) and redone on the reloaded memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import structlog

from schemas.errors import FoldmemError, InvalidEventError, NotFoundError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus
from schemas.query import RecallRequest, RecallResponse
from stream_app.embedded.interlock import TenantLocks
from stream_app.embedded.outputs import IntentOutputs, NoOutputs
from stream_app.embedded.privacy import EmbeddedPrivacy
from stream_app.embedded.store import StaleTenantError, Store
from stream_app.hub.gate import MemoryGate
from stream_app.hub.locks import TenantLockTable
from stream_app.hub.protocol import (
    Checkpoint,
    CheckpointFn,
    FoldFailedError,
    FoldOutcome,
)
from stream_app.hub.reads import HubReads
from stream_app.hub.upkeep import NightlySchedule
from stream_app.ingest.admission import Admission
from topologies.engine import FoldEngine, FoldResult, node_to_event
from topologies.memory import ChangeSet, TenantMemory, event_node_id
from topologies.nightly.run import NightlyReport

log = structlog.get_logger(__name__)
T = TypeVar("T")

_RETRIES = 3
Positions = Callable[[], Sequence[Checkpoint]]


class MemoryHub(HubReads, EmbeddedPrivacy):
    def __init__(
        self,
        store: Store,
        engine: FoldEngine,
        outputs: IntentOutputs | None = None,
        planner_name: str = "",
        admission: Admission | None = None,
        locks: TenantLocks | None = None,
    ) -> None:
        self.store = store
        self.engine = engine
        self.admission = admission or Admission()
        self.locks = locks  # None: this process is the data dir's only writer
        self.outputs = outputs or NoOutputs()  # the outbox's sinks (stdout, files, webhook)
        self.planner_name = planner_name or engine.planner.name
        self._memories: dict[str, TenantMemory] = {}
        self._versions: dict[str, int] = {}
        self._tenant_locks = TenantLockTable()
        # a fold's CPU-bound steps run in a worker thread, the API's requests between them
        self.gate = MemoryGate()
        engine.offload = self.gate.offload
        self.nightly = NightlySchedule()
        self._data_version = store.data_version()
        store.bind_embedder(engine.embedder.model_id, engine.embedder.dim)
        self._persist_llm_usage()

    def _persist_llm_usage(self) -> None:
        """The LLM planner's token ledger survives restarts: rows restored, then upserted."""
        ledger = getattr(self.engine.planner, "ledger", None)
        if ledger is None or self.store.readonly:
            return
        for tenant, day, counters in self.store.usage_rows():
            ledger.restore_row(tenant, day, counters)
        ledger.listener = self.store.save_usage

    # ------------------------------------------------------------------ access
    def lock(self, tenant: str) -> asyncio.Lock:
        return self._tenant_locks.lock(tenant)

    def tenants(self) -> list[str]:
        self.refresh()
        return sorted(set(self.store.tenants()) | set(self._memories))

    def refresh(self) -> None:
        """Reload tenants another process changed since we last looked."""
        current = self.store.data_version()
        if current == self._data_version:
            return
        self._data_version = current
        stored = self.store.versions()
        for tenant in list(self._memories):
            if stored.get(tenant, 0) != self._versions.get(tenant, 0):
                log.info("tenant_reloaded", tenant=tenant, version=stored.get(tenant, 0))
                self._load(tenant)

    def view(self, tenant: str) -> TenantMemory:
        """The tenant's current memory, for reading. NotFoundError if it has none."""
        self.refresh()
        return self._memory(tenant, create=False)

    def folded_by(self, tenant: str) -> dict[str, Any]:
        """From the data dir: every process that folded into it, not only this one."""
        self.view(tenant)  # NotFoundError for a tenant the store does not hold
        return dict(self.store.folded_by(tenant))

    def _memory(self, tenant: str, *, create: bool) -> TenantMemory:
        memory = self._memories.get(tenant)
        if memory is not None:
            return memory
        if tenant in self.store.tenants():
            return self._load(tenant)
        if not create:
            raise NotFoundError(f"tenant {tenant!r} not found")
        memory = self.engine.new_memory(tenant)
        self._memories[tenant] = memory
        self._versions[tenant] = 0
        return memory

    def _load(self, tenant: str) -> TenantMemory:
        memory, version = self.store.load_tenant(
            tenant, self.engine.embedder.dim, ann=self.engine.config.ann
        )
        self._memories[tenant] = memory
        self._versions[tenant] = version
        return memory

    def _forget(self, tenant: str) -> None:
        self._memories.pop(tenant, None)
        self._versions.pop(tenant, None)

    def persist(
        self,
        tenant: str,
        changes: Sequence[ChangeSet],
        messages: Sequence[IntentMessage] = (),
        checkpoints: Sequence[Checkpoint] = (),
    ) -> None:
        try:
            versions = self.store.apply(
                [c for c in changes if not c.empty],
                messages=messages,
                checkpoints=checkpoints,
                expected_versions={tenant: self._versions.get(tenant, 0)},
            )
        except BaseException:
            self._forget(tenant)  # memory is ahead of the store: reload it next time
            raise
        self._versions[tenant] = versions.get(tenant, self._versions.get(tenant, 0))
        self.follow(changes)  # the read path's lexical index follows each commit

    def memory(self, tenant: str, *, create: bool = False) -> TenantMemory:
        """The live TenantMemory for writers holding the tenant's lock (see :meth:`lock`)."""
        return self._memory(tenant, create=create)

    # ------------------------------------------------------------------ writes
    async def retrying(
        self,
        tenant: str,
        attempt: Callable[[TenantMemory], Awaitable[T]],
        *,
        create: bool = False,
    ) -> T:
        """Run a write on the tenant's freshest memory, holding the tenant's cross-process
        lock (TenantBusyError if another process keeps it too long); when its persist finds
        that another process wrote the tenant first (StaleTenantError), reload and run it
        again. The caller holds the tenant's in-process lock."""
        async with self._interlocked(tenant):
            for number in range(_RETRIES):
                self.refresh()
                memory = self._memory(tenant, create=create)
                try:
                    return await attempt(memory)
                except StaleTenantError:
                    if number == _RETRIES - 1:
                        raise
                    log.info("write_retry_stale", tenant=tenant, attempt=number + 1)
        raise AssertionError("unreachable")  # pragma: no cover

    def _interlocked(self, tenant: str) -> contextlib.AbstractAsyncContextManager[None]:
        if self.locks is None:
            return contextlib.nullcontext()
        return self.locks.hold(tenant)

    async def fold(self, event: RawEvent, checkpoints: CheckpointFn | None = None) -> FoldResult:
        """Admit (EventTimeError for a time too far ahead of the clock), ingest (persisted
        before planning) then fold one event, durably."""
        positions = None if checkpoints is None else (lambda: checkpoints(event))
        return await self._fold(self.admission.admit(event), positions)

    async def fold_batch(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[FoldOutcome]:
        """:meth:`stream_app.hub.Hub.fold_batch`: each tenant's admitted events folded as one
        engine batch (:meth:`topologies.engine.FoldEngine.fold_batch`) in two commits: the
        raw events (the tenant's inbox) before any is planned, then the fold results, their
        intent messages and the source positions of every event of the batch. A tenant's
        events in ``ahead`` (the next batch) are embedded while its batch folds."""
        outcomes: list[FoldOutcome | None] = [None] * len(events)
        admitted: dict[str, list[tuple[int, RawEvent]]] = {}
        for position, event in enumerate(events):
            try:
                admitted.setdefault(event.tenant, []).append(
                    (position, self.admission.admit(event))
                )
            except InvalidEventError as exc:
                outcomes[position] = exc
        for tenant, todo in admitted.items():
            mine = [e for _, e in todo]
            later = [e for e in ahead if e.tenant == tenant]
            done = await self._fold_tenant_batch(tenant, mine, checkpoints, later)
            for (position, _), outcome in zip(todo, done, strict=True):
                outcomes[position] = outcome
        await self.publish_pending()
        return [o for o in outcomes if o is not None]

    async def _fold_tenant_batch(
        self,
        tenant: str,
        events: list[RawEvent],
        checkpoints: CheckpointFn | None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[FoldOutcome]:
        try:
            async with self.lock(tenant):
                return await self.retrying(
                    tenant,
                    lambda m: self._fold_batch_locked(m, events, checkpoints, ahead),
                    create=True,
                )
        except FoldmemError as exc:  # busy (TransientError), or refused: each event says so
            return [exc] * len(events)
        except Exception as exc:  # a bug must not stop the stream; the events stay stored
            log.exception("fold_crashed", tenant=tenant, events=len(events))
            return [FoldFailedError(f"{type(exc).__name__}: {exc}")] * len(events)

    async def _fold_batch_locked(
        self,
        memory: TenantMemory,
        events: list[RawEvent],
        checkpoints: CheckpointFn | None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[FoldOutcome]:
        tenant = memory.tenant
        batch = await self.engine.fold_batch(
            memory, events, on_stored=lambda stored: self.persist(tenant, [stored]), ahead=ahead
        )
        positions = [c for e in events for c in (checkpoints(e) if checkpoints else ())]
        self.persist(tenant, batch.fold_changes, messages=batch.messages, checkpoints=positions)
        return [_outcome(r) for r in batch.results]

    async def _fold(self, event: RawEvent, checkpoints: Positions | None = None) -> FoldResult:
        async with self.lock(event.tenant):
            result = await self.retrying(
                event.tenant, lambda m: self._fold_locked(m, event, checkpoints), create=True
            )
        await self.publish_pending()
        return result

    async def _fold_locked(
        self, memory: TenantMemory, event: RawEvent, checkpoints: Positions | None
    ) -> FoldResult:
        tenant = memory.tenant
        result = await self.engine.fold(
            memory, event, on_stored=lambda stored: self.persist(tenant, [stored])
        )
        if result.status == "duplicate":
            return result
        self.persist(
            tenant,
            result.fold_changes,
            messages=result.messages,
            checkpoints=checkpoints() if checkpoints else (),
        )
        return result

    async def recover(self) -> int:
        """Fold every event that was stored but not folded (a crash between the two commits):
        a batch's inbox first, then events stored one at a time."""
        count = 0
        for tenant in self.store.tenants():
            async with self.lock(tenant):
                inbox = len(self.engine.inbox(self._memory(tenant, create=False)))
                if inbox:
                    log.info("refold_stored_batch", tenant=tenant, events=inbox)
                    await self.retrying(tenant, self._recover_inbox)
                    count += inbox
                memory = self._memory(tenant, create=False)
                pending = []
                for event_id in memory.pending_events():
                    node = memory.graph.get(event_node_id(tenant, event_id))
                    if node is not None:
                        pending.append(node_to_event(node))
            for event in sorted(pending, key=lambda e: e.ts):
                log.info("refold_stored_event", tenant=tenant, event_id=event.id)
                await self._fold(event)  # admitted when it was stored
                count += 1
        return count

    async def _recover_inbox(self, memory: TenantMemory) -> None:
        batch = await self.engine.recover_inbox(memory)
        self.persist(memory.tenant, batch.fold_changes, messages=batch.messages)

    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str = ""
    ) -> list[IntentMessage]:

        async def attempt(memory: TenantMemory) -> list[IntentMessage]:
            node = memory.graph.get(intent_id)
            if node is None or node.kind != NodeKind.INTENT:
                raise NotFoundError(f"intent {intent_id!r} not found for tenant {tenant!r}")
            now = self.engine.stream_now(memory)
            changes, messages = self.engine.set_intent_status(memory, node.id, status, now, note)
            if not changes.empty or messages:
                self.persist(tenant, [changes], messages=messages)
            return messages

        async with self.lock(tenant):
            messages = await self.retrying(tenant, attempt)
        if messages:
            await self.publish_pending()
        return messages

    async def recall(self, tenant: str, request: RecallRequest) -> RecallResponse:
        """Cued recall under the tenant's lock; the recall history is persisted before
        returning."""

        async def attempt(memory: TenantMemory) -> RecallResponse:
            response, changes = self.reader.recall(memory, request)
            if not changes.empty:
                self.persist(tenant, [changes])
            return response

        async with self.lock(tenant):
            return await self.retrying(tenant, attempt)

    async def sweep(self, tenant: str | None = None) -> dict[str, int]:
        """The decay sweep for one or every tenant; returns pruned/changed items per tenant."""
        done: dict[str, int] = {}

        async def attempt(memory: TenantMemory) -> int | None:
            if memory.meta.get("clock") is None:
                return None  # nothing folded yet
            changes = self.engine.sweep(memory, self.engine.stream_now(memory))
            if not changes.empty:
                self.persist(memory.tenant, [changes])
            return len(changes.edges) + len(changes.nodes)

        for name in [tenant] if tenant else self.tenants():
            async with self.lock(name):
                count = await self.retrying(name, attempt)
            if count is not None:
                done[name] = count
        return done

    # ----------------------------------------------------------------- outbox
    async def publish_pending(self) -> None:
        """Deliver committed intent messages to the inline sinks (the terminal, the JSONL
        file) now; a webhook is delivered in the background or when the outputs close
        (:mod:`stream_app.outbox.delivery`). Another process delivering a sink right now
        leaves the rows to it (or to this process's next call)."""
        if not self.store.readonly:
            await self.outputs.publish()

    async def close_outputs(self) -> None:
        """Drain the outputs (a webhook for up to FOLDMEM_WEBHOOK_DRAIN_S; the rest stays in
        the outbox for the next process) and release the sinks."""
        await self.outputs.close()

    # ------------------------------------------------- nightly and privacy
    async def nightly_if_due(self) -> dict[str, NightlyReport]:
        """The runner's idle hook (its periodic sweep loop): a nightly run for every tenant
        that :attr:`nightly` finds due."""
        return await self.nightly.run_due(self.tenants(), self.view, self.consolidate)


def _outcome(result: FoldResult) -> FoldOutcome:
    """A batch's FoldResult as the Hub contract's outcome: refusals and failures as errors."""
    if result.refusal is not None:
        return result.refusal
    if result.status == "failed":
        return FoldFailedError(result.error or "fold failed")
    return result
