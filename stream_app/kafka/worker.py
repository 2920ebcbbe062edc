"""The Kafka deployment: a Faust app folding ``foldmem.events`` into per-tenant memories.

Built by :func:`build_worker` from Settings (nothing happens at import time):

- in ``foldmem.events`` (RawEvent JSON, key = tenant); out ``foldmem.intents`` (IntentMessage
  JSON, key = tenant, header ``message_id`` = intent id + status); ``foldmem.deadletter`` (the
  original bytes; reason and source topic/partition/offset in headers).
- State: a Faust table written from the engine's ChangeSets (:mod:`stream_app.kafka.state`),
  on the changelog partition of the tenant, recovered by Faust on assignment.
- Order: the agent runs ``kafka_concurrency`` actors; an actor takes its tenant's FIFO lock
  before its first await, so events of one tenant are folded in partition order while
  different tenants proceed concurrently (docs/kafka.md).
- Read API: the embedded mode's FastAPI app over a :class:`KafkaHub`; a middleware answers
  ``/tenants/{tenant}/...`` locally when this worker owns the tenant's partition, forwards it
  to the owner otherwise (the assignor's table metadata), and answers 503 until recovery is
  complete. ``/metrics`` is Prometheus text.
- Privacy and nightly routes (:mod:`stream_app.api.privacy`): the owner worker forgets an
  event or a tenant, changes layers or runs a nightly pass under the tenant's lock and writes
  the ChangeSet to the changelog (deleted items as tombstones at once,
  :mod:`stream_app.kafka.privacy`). The sweep timer also runs a nightly pass for each idle
  tenant (:class:`stream_app.embedded.privacy.NightlySchedule`, the embedded runner's rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import faust
import httpx
import orjson
import structlog
import uvicorn
from aiokafka.partitioner import murmur2
from fastapi import FastAPI, Request, Response
from faust.types import TP
from pydantic import ValidationError

from schemas.errors import FoldmemError, InvalidEventError, NotFoundError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus
from stream_app.embedded.privacy import (
    NIGHTLY_BUDGET_S,
    NightlySchedule,
    intent_statuses,
    llm_inductor,
    rebuild_derived,
    retractions,
    run_night,
)
from stream_app.ingest.admission import Admission
from stream_app.kafka.codec import COMMIT, table_key
from stream_app.kafka.metrics import CONTENT_TYPE, WorkerMetrics
from stream_app.kafka.privacy import forget_event_kafka, forget_tenant_kafka, set_layers_kafka
from stream_app.kafka.state import KafkaTenantState
from stream_app.settings import Settings
from topologies.engine import FoldEngine, FoldResult
from topologies.memory import ChangeSet, TenantMemory
from topologies.nightly.run import NightlyReport
from topologies.privacy import DeletionReport, layers
from topologies.read import Reader

log = structlog.get_logger(__name__)
T = TypeVar("T")

STATE_TABLE = "state"
# routers of the embedded API the workers also serve (HTTP ingest and the store-backed
# metrics are left out: events enter through Kafka, /metrics is the worker's own)
OPTIONAL_ROUTERS = ("stream_app.api.read", "stream_app.api.privacy")
FORWARDED = "x-foldmem-forwarded"
_TENANT_PATH = re.compile(r"^/tenants/([^/]+)(?:/|$)")


def faust_datadir(settings: Settings) -> Path:
    """Faust's own local files (table metadata) live in the data dir, per app id."""
    return settings.data_dir / "faust" / settings.kafka_app_id


class FoldError(FoldmemError):
    """The engine failed on an event (a bug): it is dead-lettered with this reason."""


class StateUnavailableError(FoldmemError):
    """This worker cannot serve the tenant now: its state is being recovered, or the tenant's
    partition is not (or no longer) its own. The API answers 503 with ``Retry-After``."""


class KafkaModeError(FoldmemError):
    """Something the embedded hub does that the Kafka worker cannot do this way."""


def _bytes_topic(app: faust.App, name: str, partitions: int) -> Any:
    """A topic of raw bytes keys and values: foldmem encodes and validates them itself."""
    return app.topic(
        name,
        partitions=partitions,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
    )


def broker_urls(brokers: Sequence[str]) -> list[str]:
    return [b if "://" in b else f"kafka://{b}" for b in brokers]


def partition_for(tenant: str, partitions: int) -> int:
    """The partition of a tenant: Kafka's default partitioner over key = tenant (murmur2)."""
    return (murmur2(tenant.encode()) & 0x7FFFFFFF) % partitions


def parse_event(raw: bytes | None, key: bytes | None) -> RawEvent:
    """A RawEvent from a message, or InvalidEventError naming what is wrong."""
    if raw is None:
        raise InvalidEventError("empty message value", raw)
    try:
        event = RawEvent.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'event'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidEventError(f"invalid RawEvent: {problems}", raw) from exc
    if key is None or key != event.tenant.encode():
        raise InvalidEventError(
            f"message key {key!r} is not the event's tenant {event.tenant!r} "
            "(key events by tenant)",
            raw,
        )
    return event


class _EmbeddedServer(uvicorn.Server):
    """uvicorn inside Faust's loop: Faust owns the signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class KafkaHub:
    """What the embedded API needs from a hub, backed by the worker's Kafka state; also the
    :class:`stream_app.embedded.privacy.PrivacyOps` of the API's privacy and nightly routes."""

    def __init__(self, worker: KafkaWorker) -> None:
        self.worker = worker
        self.engine = worker.engine
        self.planner_name = worker.engine.planner.name
        self.nightly = NightlySchedule()
        self._reader: Reader | None = None

    @property
    def reader(self) -> Reader:
        """The read path (lexical indexes, timelines), built on first use, kept in step."""
        if self._reader is None:
            self._reader = Reader(self.engine.embedder)
        return self._reader

    def follow(self, changes: Iterable[ChangeSet]) -> None:
        """Keep the read path's indexes in step with written ChangeSets."""
        if self._reader is not None:
            for change in changes:
                self._reader.apply(change)

    @contextlib.asynccontextmanager
    async def owned(self, tenant: str) -> AsyncIterator[None]:
        """The tenant's lock, once it is certain that this worker owns the tenant (a writer
        must never write a partition another worker owns)."""
        async with self.lock(tenant):
            if not self.worker.owns_tenant(tenant):
                raise StateUnavailableError(f"tenant {tenant!r} is not owned by this worker now")
            yield

    async def retrying(
        self,
        tenant: str,
        attempt: Callable[[TenantMemory], Awaitable[T]],
        *,
        create: bool = False,
    ) -> T:
        """:meth:`stream_app.embedded.hub.MemoryHub.retrying` for a worker: no other process
        writes a tenant this worker owns, so there is nothing to retry."""
        return await attempt(self.view(tenant))

    def persist(
        self, tenant: str, changes: Sequence[ChangeSet], messages: Sequence[IntentMessage] = ()
    ) -> None:
        """Write ChangeSets of a synchronous API writer (recall) that holds the tenant's lock;
        the changelog sends are awaited in the background."""
        if messages:
            raise KafkaModeError("intent messages are published with KafkaWorker.commit")
        if not self.worker.owns_tenant(tenant):
            raise StateUnavailableError(f"tenant {tenant!r} is not owned by this worker now")
        self.worker.write(changes)
        self.worker.flush_soon()

    def tenants(self) -> list[str]:
        if not self.worker.ready:  # loading the state before recovery ends would miss records
            return []
        return self.worker.state.tenants()

    def view(self, tenant: str) -> TenantMemory:
        if not self.worker.ready:
            raise StateUnavailableError("state recovery in progress")
        memory = self.worker.state.get(tenant)
        if memory is None:
            raise NotFoundError(f"tenant {tenant!r} not found")
        return memory

    def lock(self, tenant: str) -> asyncio.Lock:
        return self.worker.lock(tenant)

    def now(self, tenant: str) -> datetime:
        return self.engine.stream_now(self.view(tenant))

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
            await self.worker.commit(tenant, [changes], messages)
        return messages

    async def sweep(self, tenant: str | None = None) -> dict[str, int]:
        done: dict[str, int] = {}
        for name in [tenant] if tenant else self.tenants():
            async with self.lock(name):
                memory = self.worker.state.get(name)
                if not self.worker.owns_tenant(name) or memory is None:
                    continue  # moved away since it was listed
                if memory.meta.get("clock") is None:
                    continue
                changes = self.engine.sweep(memory, self.engine.stream_now(memory))
                done[name] = len(changes.edges) + len(changes.nodes)
                if changes.empty:
                    continue
                self.worker.write([changes])
                await self.worker.settle(name)  # acknowledged and sealed, as other writers
        return done

    # ------------------------------------------------------- nightly and privacy
    async def consolidate(self, tenant: str, budget_s: float = NIGHTLY_BUDGET_S) -> NightlyReport:
        """One nightly pass for a tenant this worker owns: its intents are published, then its
        ChangeSet is written to the changelog (like a fold's)."""
        if llm_inductor(self.engine) is None:
            # the deterministic night is CPU work in the event loop: bounded well inside the
            # session timeout, so the worker keeps heartbeating (truncated: next night goes on)
            budget_s = min(budget_s, self.worker.nightly_block_s)
        async with self.owned(tenant):
            memory = self.view(tenant)
            report = await run_night(self.engine, memory, budget_s)
            if report.changes is not None and not report.changes.empty:
                records = await self.worker.commit(tenant, [report.changes], report.messages)
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

    async def forget_event(self, tenant: str, event_id: str, actor: str) -> DeletionReport:
        async with self.owned(tenant):
            statuses = intent_statuses(self.worker.state.memory(tenant))
            report = forget_event_kafka(
                self.worker.state, tenant, event_id, actor, self.engine.embedder
            )
            await self._privacy_written(tenant, report.changes)
            await self.worker.publish(retractions(report, statuses, "event_forgotten"))
        return report

    async def forget_tenant(self, tenant: str, actor: str) -> DeletionReport:
        async with self.owned(tenant):
            statuses = intent_statuses(self.view(tenant))  # NotFoundError: never seen here
            report = forget_tenant_kafka(self.worker.state, tenant, actor)
            await self._privacy_written(tenant, report.changes)
            await self.worker.publish(retractions(report, statuses, "tenant_forgotten"))
        return report

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]:
        async with self.owned(tenant):
            written = set_layers_kafka(
                self.worker.state,
                tenant,
                changes,
                purge=purge,
                actor=actor,
                embedder=self.engine.embedder,
            )
            await self._privacy_written(tenant, written)
        return layers(self.view(tenant))

    async def _privacy_written(self, tenant: str, changes: ChangeSet | None) -> None:
        """After a privacy write (already on the changelog, tombstones included): derived
        indexes follow, and the sends are confirmed before the API answers."""
        if changes is None or changes.empty:
            return
        self.follow([changes])
        memory = self.worker.state.get(tenant)
        if memory is not None:
            rebuild_derived(memory)
        await self.worker.settle(tenant)


class KafkaWorker:
    """One Faust app instance plus the engine, the state and the read API it serves."""

    def __init__(self, settings: Settings, engine: FoldEngine | None = None) -> None:
        from stream_app.factory import build_engine

        self.settings = settings
        self.engine = engine or build_engine(settings)
        self.admission = Admission.of(settings.max_future_days)
        self.partitions = settings.kafka_partitions
        host = settings.kafka_advertised_host or settings.api_host
        if host in ("0.0.0.0", "::", ""):  # bound to every interface: advertise our address
            host = socket.gethostbyname(socket.gethostname())
        self.url = f"http://{host}:{settings.api_port}"
        timeout = settings.kafka_session_timeout
        faust_datadir(settings).parent.mkdir(parents=True, exist_ok=True)
        self.app = faust.App(
            settings.kafka_app_id,
            broker=broker_urls(settings.kafka_broker_list),
            store="memory://",
            datadir=str(faust_datadir(settings)),  # under the data dir, not the CWD
            autodiscover=False,
            web_enabled=False,
            canonical_url=self.url,
            topic_partitions=self.partitions,
            topic_replication_factor=settings.kafka_replication,
            key_serializer="raw",
            value_serializer="raw",
            consumer_auto_offset_reset="earliest",
            broker_session_timeout=timeout,
            broker_heartbeat_interval=max(0.5, timeout / 5),
            broker_rebalance_timeout=max(timeout, 10.0),
            broker_commit_interval=1.0,
            table_standby_replicas=settings.kafka_standby_replicas,
            producer_max_batch_size=4 * 1024 * 1024,
            producer_max_request_size=8 * 1024 * 1024,
            producer_linger=0.005,
        )
        app = self.app
        self.events_topic = _bytes_topic(app, settings.kafka_events_topic, self.partitions)
        self.intents_topic = _bytes_topic(app, settings.kafka_intents_topic, self.partitions)
        self.deadletter_topic = _bytes_topic(app, settings.kafka_deadletter_topic, 1)
        self.table = app.Table(
            STATE_TABLE, partitions=self.partitions, key_type=bytes, value_type=bytes
        )
        self.changelog_topic = f"{settings.kafka_app_id}-{STATE_TABLE}-changelog"
        self.state = KafkaTenantState(
            cast(Any, self.table),
            self.engine.embedder.dim,
            self.tenant_partition,
            self._owns,
            ann=self.engine.config.ann,
        )
        self.metrics = WorkerMetrics(lag=self._lag, usage=self._llm_usage)
        # longest deterministic nightly pass: CPU in the event loop, so well inside the
        # session timeout (heartbeats wait for it)
        self.nightly_block_s = max(1.0, timeout / 2)
        self.hub = KafkaHub(self)
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Future[Any]] = set()
        self._server: uvicorn.Server | None = None
        self._http: httpx.AsyncClient | None = None
        app.agent(self.events_topic, name="fold", concurrency=settings.kafka_concurrency)(
            self._agent
        )
        app.task(self._serve_api)
        if settings.sweep_interval > 0:
            app.timer(settings.sweep_interval)(self._sweep)
        app.on_partitions_revoked.connect(cast(Any, self._on_revoked))
        app.on_partitions_assigned.connect(cast(Any, self._on_assigned))

    # --------------------------------------------------------------- ownership
    def tenant_partition(self, tenant: str) -> int:
        return partition_for(tenant, self.partitions)

    def _owns(self, partition: int) -> bool:
        return (
            TP(self.settings.kafka_events_topic, partition) in self.app.assignor.assigned_actives()
        )

    def owns_tenant(self, tenant: str) -> bool:
        """This worker owns the tenant's partition and its state is recovered."""
        return self.ready and self._owns(self.tenant_partition(tenant))

    def owner_url(self, tenant: str) -> str | None:
        """The API URL of the worker owning the tenant's partition (None while unassigned)."""
        partition = self.tenant_partition(tenant)
        for url, topics in self.app.assignor.table_metadata(self.changelog_topic).items():
            if partition in topics.get(self.changelog_topic, ()):
                return str(url)
        return None

    @property
    def ready(self) -> bool:
        recovery = cast(Any, self.app.tables).recovery
        return bool(
            recovery.completed.is_set() and not recovery.in_recovery and not self.app.rebalancing
        )

    async def _on_revoked(self, sender: Any, revoked: set[TP], **_: Any) -> None:
        gone = {tp.partition for tp in revoked if tp.topic == self.settings.kafka_events_topic}
        for tenant in self.state.tenants_in(gone):
            self.state.forget(tenant)
        log.info("partitions_revoked", partitions=sorted(gone))

    async def _on_assigned(self, sender: Any, assigned: set[TP], **_: Any) -> None:
        self.state.mark_stale()
        mine = sorted(
            tp.partition for tp in assigned if tp.topic == self.settings.kafka_events_topic
        )
        log.info("partitions_assigned", partitions=mine)

    # ------------------------------------------------------------------- fold
    def lock(self, tenant: str) -> asyncio.Lock:
        lock = self._locks.get(tenant)
        if lock is None:
            lock = self._locks[tenant] = asyncio.Lock()
        return lock

    async def _agent(self, stream: Any) -> None:
        async for event in stream.events():
            await self.handle(event.message)

    async def handle(self, message: Any) -> FoldResult | None:
        """Fold one events-topic message (or dead-letter it). Called by the agent's actors."""
        arrived = datetime.fromtimestamp(message.timestamp, UTC) if message.timestamp else None
        try:
            event = parse_event(message.value, message.key)
            expected = self.tenant_partition(event.tenant)
            if message.partition != expected:
                raise InvalidEventError(
                    f"tenant {event.tenant!r} belongs to partition {expected}, "
                    f"the message is on {message.partition}"
                )
            if event.received_at is None and arrived is not None:
                # the broker-side timestamp, not the wall clock: a replay folds the same value
                event = event.model_copy(update={"received_at": arrived})
            # times too far ahead are refused against the same broker timestamp (a replay
            # admits what the first run admitted)
            event = self.admission.admit(event, arrived)
        except InvalidEventError as exc:
            await self.deadletter(message, exc.reason)
            return None
        # no await before the lock: actors queue on it in the order they took the messages
        async with self.lock(event.tenant):
            try:
                return await self._fold_locked(event)
            except FoldError as exc:
                log.exception("fold_failed", tenant=event.tenant, event_id=event.id)
                await self.deadletter(message, str(exc))
                return None
            except InvalidEventError as exc:  # refused by the engine (a forgotten event id)
                log.info("event_refused", tenant=event.tenant, event_id=event.id, reason=exc.reason)
                await self.deadletter(message, exc.reason)
                return None

    def _write_stored(self, stored: ChangeSet) -> None:
        self.write([stored])

    async def _fold_locked(self, event: RawEvent) -> FoldResult:
        started = time.perf_counter()
        memory = self.state.memory(event.tenant)
        try:  # the raw event reaches the changelog before any planner runs
            result = await self.engine.fold(memory, event, on_stored=self._write_stored)
        except InvalidEventError:
            raise
        except Exception as exc:  # planner failures are handled inside; this is a bug
            raise FoldError(f"fold failed: {type(exc).__name__}: {exc}") from exc
        if result.status == "duplicate":
            self.metrics.events_folded.labels(status="duplicate").inc()
            return result
        # intents are confirmed before the state that says "folded": a crash in between
        # re-emits them with the same message_id instead of losing them
        await self.publish(result.messages)
        self.write(result.fold_changes)
        self.metrics.events_folded.labels(status=result.status).inc()
        self.metrics.fold_seconds.observe(time.perf_counter() - started)
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

    async def publish(self, messages: Sequence[IntentMessage]) -> None:
        futures = []
        for message in messages:
            fut = await self.intents_topic.send(
                key=message.tenant.encode(),
                value=message.model_dump_json().encode(),
                headers=[("message_id", message.message_id.encode())],
            )
            futures.append(fut)
            self.metrics.intents_emitted.labels(type=message.type).inc()
        if futures:
            await asyncio.gather(*futures)

    def write(self, changes: Sequence[ChangeSet]) -> int:
        """Write ChangeSets to the state (sends queued: see :meth:`flush_state`); the read
        path follows. Returns the number of changelog records."""
        records = self.state.write(changes)
        self.metrics.state_records.inc(records)
        self.hub.follow(changes)
        return records

    async def commit(
        self, tenant: str, changes: Sequence[ChangeSet], messages: Sequence[IntentMessage] = ()
    ) -> int:
        """A writer's transaction outside the fold (nightly, intent status), under the
        tenant's lock: intents are confirmed first, then the ChangeSets are written and
        settled (:meth:`settle`)."""
        try:
            await self.publish(messages)
        except BaseException:
            self._reload(tenant)
            raise
        if not self.owns_tenant(tenant):  # revoked while publishing: never write its partition
            self._reload(tenant)
            raise StateUnavailableError(f"tenant {tenant!r} moved to another worker (now)")
        records = self.write(changes)
        await self.settle(tenant)
        return records

    async def settle(self, tenant: str) -> None:
        """Wait for the changelog sends of the tenant's last write, then seal it (see
        :meth:`_seal`). If that fails, the memory (ahead of the changelog) is reloaded."""
        try:
            await self.flush_state()
            await self._seal(tenant)
        except BaseException:
            self._reload(tenant)
            raise

    def _reload(self, tenant: str) -> None:
        """Drop the tenant's memory: it is rebuilt from the table on next use."""
        log.warning("tenant_reloaded", tenant=tenant)
        self.state.forget(tenant)
        self.state.mark_stale()

    async def flush_state(self) -> None:
        """Wait until the changelog has every record of the last write."""
        pending = self.state.take_pending()
        if pending:
            await asyncio.gather(*cast(list[Awaitable[Any]], pending))

    async def _seal(self, tenant: str) -> None:
        """Re-send the tenant's commit marker after its transaction is acknowledged, so the
        transaction never sits in the partition's last record batch. Recovery reads a
        changelog partition up to its high watermark, and tansu 0.6.0 reports that as the
        last batch's base offset + 1, hiding the rest of that batch (docs/kafka.md). A broker
        that reports it right keeps one duplicate marker. The caller holds the tenant's lock."""
        key = table_key(tenant, COMMIT, "")
        marker = self.state.table.data.get(key)
        if marker is None:
            return
        sent = self.state.table.send_changelog(self.tenant_partition(tenant), key, marker)
        if sent is not None:
            await sent

    def flush_soon(self) -> None:
        """Await the pending changelog sends in the background (synchronous writers)."""
        pending = self.state.take_pending()
        if not pending:
            return
        future = asyncio.ensure_future(asyncio.gather(*cast(list[Awaitable[Any]], pending)))
        self._background.add(future)
        future.add_done_callback(self._flushed)

    def _flushed(self, future: asyncio.Future[Any]) -> None:
        self._background.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.error("changelog_send_failed", error=str(future.exception()))

    async def deadletter(self, message: Any, reason: str) -> None:
        headers = [
            ("reason", reason.encode()),
            ("source_topic", str(message.topic).encode()),
            ("source_partition", str(message.partition).encode()),
            ("source_offset", str(message.offset).encode()),
        ]
        fut = await self.deadletter_topic.send(
            key=message.key, value=message.value, headers=headers
        )
        await fut
        self.metrics.deadletters.inc()
        log.warning(
            "event_deadlettered",
            reason=reason,
            topic=message.topic,
            partition=message.partition,
            offset=message.offset,
        )

    async def _sweep(self) -> None:
        """The periodic decay sweep over this worker's tenants (stream clock, not wall clock),
        then a nightly pass for each idle tenant that is due one."""
        if not self.ready:
            return
        try:
            pruned = await self.hub.sweep()
            log.info("sweep_done", tenants=len(pruned), changed=sum(pruned.values()))
            ran = await self.hub.nightly_if_due()
        except Exception:  # a timer task that raises crashes the whole worker (mode.Service)
            log.exception("sweep_failed")
            return
        if ran:
            log.info("nightly_sweep_done", tenants=sorted(ran))

    # ---------------------------------------------------------------- metrics
    def _lag(self) -> Iterator[tuple[str, int, int]]:
        consumer = self.app.consumer
        read = self.app.monitor.tp_read_offsets or {}
        for tp in sorted(consumer.assignment()):
            if tp.topic != self.settings.kafka_events_topic:
                continue
            try:
                end = consumer.highwater(tp)
            except Exception:  # not known yet
                continue
            last = read.get(tp)
            yield (
                tp.topic,
                tp.partition,
                max(0, int(end) - (int(last) + 1 if last is not None else 0)),
            )

    def _llm_usage(self) -> tuple[int, int]:
        calls = tokens = 0
        for planner in (self.engine.planner, self.engine.fallback):
            usage = getattr(planner, "usage", None)
            if usage is None:
                continue
            calls += int(getattr(usage, "calls", 0))
            tokens += int(getattr(usage, "total_tokens", getattr(usage, "tokens", 0)))
        return calls, tokens

    # -------------------------------------------------------------------- API
    def create_api(self) -> FastAPI:
        from stream_app.api.app import create_app
        from stream_app.api.guard import guard_outermost
        from stream_app.embedded.hub import MemoryHub

        modules = []
        for name in OPTIONAL_ROUTERS:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    log.error("api_router_unavailable", module=name, error=str(exc))
                continue
            except Exception as exc:  # a broken optional router must not stop the worker
                log.error("api_router_unavailable", module=name, error=str(exc))
                continue
            modules.append(name)
        api = create_app(cast(MemoryHub, self.hub), self.settings, router_modules=modules)
        api.state.privacy = self.hub  # privacy and nightly routes write the Kafka state
        worker = self

        @api.exception_handler(StateUnavailableError)
        async def unavailable(request: Request, exc: StateUnavailableError) -> Response:
            return _unavailable(str(exc))

        @api.get("/metrics", include_in_schema=False)
        async def metrics() -> Response:
            return Response(worker.metrics.render(), media_type=CONTENT_TYPE)

        @api.get("/ready", include_in_schema=False)
        async def ready() -> Response:
            ok = worker.ready
            return Response(b"ready" if ok else b"recovering", status_code=200 if ok else 503)

        @api.middleware("http")
        async def route_to_owner(
            request: Request, call_next: Callable[[Request], Awaitable[Response]]
        ) -> Response:
            match = _TENANT_PATH.match(request.url.path)
            if match is None:
                if request.url.path.rstrip("/") == "/tenants" and not worker.ready:
                    return _unavailable("state recovery in progress")
                return await call_next(request)
            if not worker.ready:
                return _unavailable("state recovery in progress")
            tenant = match.group(1)
            owner = worker.owner_url(tenant)
            if owner is None:
                return _unavailable(f"no worker owns tenant {tenant!r} yet")
            if owner.rstrip("/") == worker.url or request.headers.get(FORWARDED):
                if not worker._owns(worker.tenant_partition(tenant)):
                    return _unavailable(f"tenant {tenant!r} is moving between workers")
                return await call_next(request)
            return await worker.forward(owner, request)

        guard_outermost(api)  # token and body caps before forwarding, too
        return api

    async def forward(self, owner: str, request: Request) -> Response:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=30.0)
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
        }
        headers[FORWARDED] = self.url
        try:
            reply = await self._http.request(
                request.method,
                owner.rstrip("/") + request.url.path,
                params=request.url.query,
                headers=headers,
                content=await request.body(),
            )
        except httpx.HTTPError as exc:
            return _unavailable(f"owner {owner} unreachable: {exc}")
        drop = {"content-length", "transfer-encoding", "connection", "content-encoding"}
        return Response(
            reply.content,
            status_code=reply.status_code,
            headers={k: v for k, v in reply.headers.items() if k.lower() not in drop},
        )

    async def _serve_api(self) -> None:
        config = uvicorn.Config(
            self.create_api(),
            host=self.settings.api_host,
            port=self.settings.api_port,
            lifespan="off",
            log_config=None,
            access_log=False,
        )
        self._server = _EmbeddedServer(config)
        log.info(
            "worker_api", url=self.url, bind=f"{self.settings.api_host}:{self.settings.api_port}"
        )
        try:
            await self._server.serve()
        finally:
            self._server.should_exit = True
            if self._http is not None:
                await self._http.aclose()


def _unavailable(reason: str) -> Response:
    return Response(
        orjson.dumps({"detail": reason}),
        status_code=503,
        media_type="application/json",
        headers={"Retry-After": "1"},
    )


def build_worker(settings: Settings, engine: FoldEngine | None = None) -> KafkaWorker:
    """The Faust app and everything around it, from Settings."""
    return KafkaWorker(settings, engine)


def run_worker(settings: Settings) -> None:
    """Run a worker until SIGINT/SIGTERM (``foldmem worker``)."""
    from stream_app.kafka.topics import ensure_topics
    from stream_app.logging import configure_logging

    configure_logging(settings)
    asyncio.run(ensure_topics(settings))  # before Faust subscribes (no auto-created topics)
    worker = build_worker(settings)
    # Faust's back-pressure notices ("producer buffer full", timer drift) are routine here
    logging.getLogger("faust.transport.producer").setLevel(logging.ERROR)
    logging.getLogger("mode.timers").setLevel(logging.WARNING)
    faust_worker = faust.Worker(
        worker.app, loglevel=settings.log_level.upper(), override_logging=False
    )
    faust_worker.execute_from_commandline()
