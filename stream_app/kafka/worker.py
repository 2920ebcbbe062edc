"""The Kafka deployment's worker: a Faust app folding ``foldmem.events`` into per-tenant
memories, built by :func:`build_worker` from Settings (nothing happens at import time).

The parts, one job each:

- :mod:`~stream_app.kafka.app`: the Faust app, its topics and the state table;
- :mod:`~stream_app.kafka.agent`: the fold agent (a message folded, or dead-lettered);
- :mod:`~stream_app.kafka.hub`: :class:`KafkaHub`, the tenants this worker owns (fold, reads,
  intent status, sweep, nightly and privacy writes), on
- :mod:`~stream_app.kafka.state` / :mod:`~stream_app.kafka.changelog`: tenant state in the
  changelogged table, written per transaction with a commit marker, sealed after the brokers
  acknowledged it, recovered by Faust on assignment;
- :mod:`~stream_app.kafka.topics`: intents out (key = tenant, header ``message_id``), dead
  letters (the original bytes, the reason and the source in headers);
- :mod:`~stream_app.kafka.routing` / :mod:`~stream_app.kafka.api`: the read API, each tenant's
  requests answered by the worker that owns it;
- :mod:`~stream_app.kafka.metrics`: Prometheus metrics.

This module wires them: the agent, the API task, the sweep timer (decay, then a nightly pass
for each idle tenant) and the rebalance callbacks.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from typing import Any, cast

import faust
import structlog
from faust.types import TP

from stream_app.collector import tune_collector
from stream_app.factory import build_engine
from stream_app.ingest.admission import Admission
from stream_app.kafka import agent
from stream_app.kafka.api import serve, worker_api
from stream_app.kafka.app import build_faust_app
from stream_app.kafka.hub import KafkaHub
from stream_app.kafka.metrics import WorkerMetrics
from stream_app.kafka.routing import OwnerRouting, Ownership
from stream_app.kafka.sender import ChangelogSender
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import DeadLetterTopic, IntentTopic, ensure_topics
from stream_app.logging import configure_logging
from stream_app.settings import Settings
from topologies.engine import FoldEngine

log = structlog.get_logger(__name__)


def advertised_url(settings: Settings) -> str:
    """This worker's API as other workers reach it."""
    host = settings.kafka_advertised_host or settings.api_host
    if host in ("0.0.0.0", "::", ""):  # bound to every interface: advertise our address
        host = socket.gethostbyname(socket.gethostname())
    return f"http://{host}:{settings.api_port}"


class KafkaWorker:
    """One Faust app instance plus the engine, the state and the read API it serves."""

    def __init__(self, settings: Settings, engine: FoldEngine | None = None) -> None:
        self.settings = settings
        self.engine = engine or build_engine(settings)
        self.url = advertised_url(settings)
        faust_app = build_faust_app(settings, self.url)
        self.app = app = faust_app.app
        self.ownership = Ownership(
            app, settings.kafka_events_topic, faust_app.changelog_topic, settings.kafka_partitions
        )
        # the table's changelog records go to the producer directly, in write order
        self.sender = sender = ChangelogSender(
            faust_app.table, faust_app.changelog_topic, lambda: app.producer
        )
        self.state = KafkaTenantState(
            sender,
            self.engine.embedder.dim,
            self.ownership.tenant_partition,
            self.ownership.owns,
            ann=self.engine.config.ann,
        )
        self.metrics = WorkerMetrics(lag=self._lag, usage=self._llm_usage)
        admission = Admission.of(settings.max_future_days)
        self.hub = KafkaHub(
            self.engine,
            self.state,
            self.ownership,
            IntentTopic(faust_app.intents, self.metrics),
            self.metrics,
            admission=admission,
            nightly_block_s=max(1.0, settings.kafka_session_timeout / 2),
        )
        self.fold = agent.FoldAgent(
            self.hub,
            DeadLetterTopic(faust_app.deadletter, self.metrics),
            admission,
            self.ownership.tenant_partition,
            batch_size=settings.kafka_fold_batch_size,
            batch_within_s=max(settings.fold_batch_ms, 10.0) / 1000.0,
        )
        # batches: one actor takes them in partition order (tenants fold concurrently inside)
        concurrency = 1 if settings.kafka_fold_batch_size > 1 else settings.kafka_concurrency
        agent.register(app, faust_app.events, self.fold, concurrency)
        self.routing = OwnerRouting(self.ownership, self.url)
        app.task(self._serve_api)
        if settings.sweep_interval > 0:
            app.timer(settings.sweep_interval)(self._sweep)
        app.on_partitions_revoked.connect(cast(Any, self._on_revoked))
        app.on_partitions_assigned.connect(cast(Any, self._on_assigned))
        # after the agents finished, before Faust flushes and stops the producer
        app.on_before_shutdown.connect(cast(Any, self._on_shutdown))

    async def _serve_api(self) -> None:
        api = worker_api(self.hub, self.settings, self.routing, self.metrics)
        await serve(api, self.settings, self.routing)

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

    async def _on_shutdown(self, sender: Any, **_: Any) -> None:
        """Hand the changelog's queued records to the producer before it stops."""
        await self.sender.stop()

    async def _sweep(self) -> None:
        """The periodic decay sweep over this worker's tenants (stream clock, not wall clock),
        then a nightly pass for each idle tenant that is due one."""
        if not self.ownership.ready:
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
            if end is None:  # not fetched yet (aiokafka answers None before the first fetch)
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


def build_worker(settings: Settings, engine: FoldEngine | None = None) -> KafkaWorker:
    """The Faust app and everything around it, from Settings."""
    return KafkaWorker(settings, engine)


def run_worker(settings: Settings) -> None:
    """Run a worker until SIGINT/SIGTERM (``foldmem worker``)."""
    configure_logging(settings)
    tune_collector(settings.gc_threshold)
    asyncio.run(ensure_topics(settings))  # before Faust subscribes (no auto-created topics)
    worker = build_worker(settings)
    # Faust's back-pressure notices ("producer buffer full", timer drift) are routine here
    logging.getLogger("faust.transport.producer").setLevel(logging.ERROR)
    logging.getLogger("mode.timers").setLevel(logging.WARNING)
    faust_worker = faust.Worker(
        worker.app, loglevel=settings.log_level.upper(), override_logging=False
    )
    faust_worker.execute_from_commandline()
