"""KafkaHub: the Kafka worker's :class:`stream_app.hub.Hub`, over the tenants of the
partitions this worker owns (their memories rebuilt from the changelogged state table).

A write happens under the tenant's lock (the fold agent's too) once it is certain that this
worker owns the tenant: a worker must never write a partition another worker owns. A
transaction's intent messages are confirmed on the intents topic before its ChangeSets reach
the changelog, so a crash in between re-emits them with the same ``message_id`` instead of
losing them; writers outside the fold then wait for the changelog and seal it
(:meth:`stream_app.kafka.changelog.Changelog.settle`) before they answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence

import structlog

from schemas.errors import FoldmemError, InvalidEventError, NotFoundError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus
from schemas.query import RecallRequest, RecallResponse
from stream_app.hub.locks import TenantLockTable
from stream_app.hub.protocol import NIGHTLY_BUDGET_S, CheckpointFn, FoldFailedError, FoldOutcome
from stream_app.hub.reads import HubReads, fold_each
from stream_app.hub.upkeep import (
    NightlySchedule,
    llm_inductor,
    rebuild_derived,
    run_night,
)
from stream_app.ingest.admission import Admission
from stream_app.kafka.changelog import Changelog
from stream_app.kafka.metrics import WorkerMetrics
from stream_app.kafka.privacy import KafkaPrivacy
from stream_app.kafka.routing import Ownership, StateUnavailableError
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import IntentTopic
from topologies.engine import FoldEngine, FoldResult
from topologies.memory import ChangeSet, TenantMemory
from topologies.nightly.run import NightlyReport

log = structlog.get_logger(__name__)


class FoldError(FoldFailedError):
    """The engine failed on an event (a bug): it is dead-lettered with this reason."""


class ChangelogWriteError(FoldError):
    """A fold's changelog records (or earlier records of its tenant) did not reach the
    producer, twice: the tenant was reloaded (the missed records are queued again), and the
    event is dead-lettered with this reason rather than acknowledged past missing records."""


class KafkaModeError(FoldmemError):
    """Something the embedded hub does that the Kafka worker cannot do this way."""


class KafkaHub(HubReads, KafkaPrivacy):
    def __init__(
        self,
        engine: FoldEngine,
        state: KafkaTenantState,
        ownership: Ownership,
        intent_topic: IntentTopic,
        metrics: WorkerMetrics,
        *,
        admission: Admission | None = None,
        nightly_block_s: float = 5.0,
    ) -> None:
        self.engine = engine
        self.planner_name = engine.planner.name
        self.state = state
        self.ownership = ownership
        self.intent_topic = intent_topic
        self.metrics = metrics
        self.admission = admission or Admission()
        self.changelog = Changelog(state, metrics, self.follow)
        self.nightly = NightlySchedule()
        # longest deterministic nightly pass: CPU in the event loop, so well inside the
        # session timeout (heartbeats wait for it)
        self.nightly_block_s = nightly_block_s
        self._locks = TenantLockTable()

    # ------------------------------------------------------------------ access
    def lock(self, tenant: str) -> asyncio.Lock:
        return self._locks.lock(tenant)

    @contextlib.asynccontextmanager
    async def owned(self, tenant: str) -> AsyncIterator[None]:
        """The tenant's lock, once it is certain that this worker owns the tenant."""
        async with self.lock(tenant):
            self._check_owned(tenant)
            yield

    def _check_owned(self, tenant: str) -> None:
        if not self.ownership.owns_tenant(tenant):
            raise StateUnavailableError(f"tenant {tenant!r} is not owned by this worker now")

    def tenants(self) -> list[str]:
        if not self.ownership.ready:  # loading the state before recovery ends would miss records
            return []
        return self.state.tenants()

    def view(self, tenant: str) -> TenantMemory:
        if not self.ownership.ready:
            raise StateUnavailableError("state recovery in progress")
        memory = self.state.get(tenant)
        if memory is None:
            raise NotFoundError(f"tenant {tenant!r} not found")
        return memory

    # -------------------------------------------------------------------- fold
    async def fold(self, event: RawEvent, checkpoints: CheckpointFn | None = None) -> FoldResult:
        """Fold one event here (the events topic is the usual way in: see the fold agent)."""
        if checkpoints is not None:
            raise KafkaModeError("a Kafka worker's source positions are its consumer offsets")
        event = self.admission.admit(event)
        async with self.owned(event.tenant):
            return await self.fold_locked(event)

    async def fold_batch(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[FoldOutcome]:
        return await fold_each(self, events, checkpoints)  # one event at a time: no ahead

    async def fold_locked(self, event: RawEvent) -> FoldResult:
        """One admitted event's fold; the caller holds the tenant's lock. The raw event
        reaches the changelog before any planner runs; the intents are confirmed on their
        topic before the state that says "folded"."""
        try:
            result = await self._fold_written(event)
        except Exception:  # the fold's own error goes on (a bad event is dead-lettered)
            await self._hand_over_after_failure(event.tenant)
            raise
        await self._hand_over(event.tenant)  # in the producer before the offset is acknowledged
        return result

    async def _hand_over(self, tenant: str) -> None:
        """The tenant's records handed to the producer. If they (or earlier records of the
        tenant) were refused, the tenant is reloaded, which sends the missed records again;
        if those are refused too, a ChangelogWriteError is raised."""
        try:
            await self.changelog.hand_over(tenant)
            return
        except Exception as exc:
            self.changelog.reload(tenant)
            log.warning("changelog_hand_over_retried", tenant=tenant, error=str(exc))
        try:
            await self.changelog.hand_over(tenant)
        except Exception as exc:
            self.changelog.reload(tenant)
            raise ChangelogWriteError(
                f"changelog write failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def _hand_over_after_failure(self, tenant: str) -> None:
        """After a failed fold: its stored records handed over, never masking its error (a
        failed hand-over reloads the tenant and is logged)."""
        try:
            await self._hand_over(tenant)
        except ChangelogWriteError:
            log.exception("changelog_write_failed_after_fold_error", tenant=tenant)

    async def _fold_written(self, event: RawEvent) -> FoldResult:
        started = time.perf_counter()
        memory = self.state.memory(event.tenant)
        try:
            result = await self.engine.fold(memory, event, on_stored=self._write_stored)
        except InvalidEventError:
            raise
        except Exception as exc:  # planner failures are handled inside; this is a bug
            raise FoldError(f"fold failed: {type(exc).__name__}: {exc}") from exc
        if result.status == "duplicate":
            self.metrics.events_folded.labels(status="duplicate").inc()
            return result
        await self.intent_topic.publish(result.messages)
        self.changelog.write(result.fold_changes)
        self.metrics.events_folded.labels(status=result.status).inc()
        self.metrics.fold_seconds.observe(time.perf_counter() - started)
        self.metrics.observe_steps(result.steps)
        self.metrics.tenants.set(len(self.state))
        log.debug(
            "event_folded",
            tenant=event.tenant,
            event_id=event.id,
            status=result.status,
            ops=result.ops,
            intents=len(result.messages),
        )
        return result

    async def fold_batch_locked(self, events: Sequence[RawEvent]) -> list[FoldResult]:
        """One tenant's admitted events folded as one engine batch; the caller holds the
        tenant's lock. The events topic keeps the raw events until the batch's offsets are
        acknowledged (a crash before folds the redelivered batch again), so nothing is written
        before planning; the intents are confirmed on their topic, then the batch's changes go
        to the changelog as one merged ChangeSet, acknowledged and sealed before this returns
        (and so before the agent acknowledges the batch's offsets)."""
        started = time.perf_counter()
        memory = self.state.memory(events[0].tenant)
        try:
            batch = await self.engine.fold_batch(memory, events)
        except Exception as exc:  # per-event failures come back as results; this is a bug
            raise FoldError(f"fold failed: {type(exc).__name__}: {exc}") from exc
        for message in batch.messages:  # one record batch each: tansu shows a consumer only
            await self.intent_topic.publish([message])  # a record batch's first record at once
        self.changelog.write(batch.fold_changes)
        try:  # acknowledged and sealed before the batch's offsets are: a crash loses nothing
            await self.changelog.settle(events[0].tenant)
        except Exception as exc:  # the memory was dropped: the messages fold again
            raise FoldError(f"changelog write failed: {type(exc).__name__}: {exc}") from exc
        for result in batch.results:
            self.metrics.events_folded.labels(status=result.status).inc()
        self.metrics.fold_seconds.observe((time.perf_counter() - started) / len(events))
        self.metrics.observe_steps(batch.steps)
        self.metrics.tenants.set(len(self.state))
        return batch.results

    def _write_stored(self, stored: ChangeSet) -> None:
        self.changelog.write([stored])

    async def commit(
        self, tenant: str, changes: Sequence[ChangeSet], messages: Sequence[IntentMessage] = ()
    ) -> int:
        """A writer's transaction outside the fold (nightly, intent status), under the
        tenant's lock: intents are confirmed first, then the ChangeSets are written and
        settled. Returns the changelog records written."""
        try:
            await self.intent_topic.publish(messages)
        except BaseException:
            self.changelog.reload(tenant)
            raise
        if not self.ownership.owns_tenant(tenant):  # revoked while publishing
            self.changelog.reload(tenant)
            raise StateUnavailableError(f"tenant {tenant!r} moved to another worker (now)")
        records = self.changelog.write(changes)
        await self.changelog.settle(tenant)
        return records

    # ------------------------------------------------------------------ writes
    async def recall(self, tenant: str, request: RecallRequest) -> RecallResponse:
        """Cued recall under the tenant's lock; its history is written to the changelog (the
        sends are awaited in the background)."""
        async with self.lock(tenant):
            response, changes = self.reader.recall(self.view(tenant), request)
            if not changes.empty:
                await self.changelog.room()  # its sends are not awaited: bound the queue
                self._check_owned(tenant)
                self.changelog.write([changes])
                self.changelog.flush_soon()
        return response

    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str = ""
    ) -> list[IntentMessage]:
        async with self.owned(tenant):
            memory = self.view(tenant)
            node = memory.graph.get(intent_id)
            if node is None or node.kind != NodeKind.INTENT:
                raise NotFoundError(f"intent {intent_id!r} not found for tenant {tenant!r}")
            now = self.engine.stream_now(memory)
            changes, messages = self.engine.set_intent_status(memory, node.id, status, now, note)
            await self.commit(tenant, [changes], messages)
        return messages

    async def sweep(self, tenant: str | None = None) -> dict[str, int]:
        done: dict[str, int] = {}
        for name in [tenant] if tenant else self.tenants():
            async with self.lock(name):
                memory = self.state.get(name)
                if not self.ownership.owns_tenant(name) or memory is None:
                    continue  # moved away since it was listed
                if memory.meta.get("clock") is None:
                    continue
                changes = self.engine.sweep(memory, self.engine.stream_now(memory))
                done[name] = len(changes.edges) + len(changes.nodes)
                if changes.empty:
                    continue
                self.changelog.write([changes])
                await self.changelog.settle(name)  # acknowledged and sealed, as other writers
        return done

    # ------------------------------------------------------- nightly and privacy
    async def consolidate(self, tenant: str, budget_s: float = NIGHTLY_BUDGET_S) -> NightlyReport:
        """One nightly pass for a tenant this worker owns: its intents are published, then its
        ChangeSet is written to the changelog (like a fold's)."""
        if llm_inductor(self.engine) is None:
            # the deterministic night is CPU work in the event loop: bounded well inside the
            # session timeout, so the worker keeps heartbeating (truncated: next night goes on)
            budget_s = min(budget_s, self.nightly_block_s)
        async with self.owned(tenant):
            memory = self.view(tenant)
            report = await run_night(self.engine, memory, budget_s)
            if report.changes is not None and not report.changes.empty:
                records = await self.commit(tenant, [report.changes], report.messages)
                rebuild_derived(memory)
                log.info(
                    "nightly_committed",
                    tenant=tenant,
                    records=records,
                    intents_published=len(report.messages),
                    truncated=report.truncated,
                )
        return report

    async def nightly_if_due(self) -> dict[str, NightlyReport]:
        """A nightly pass for each owned tenant that is idle and due (the sweep timer)."""
        return await self.nightly.run_due(self.tenants(), self.view, self.consolidate)
