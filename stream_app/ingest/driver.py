"""The one ingest driver: sources in, a target out (``foldmem run``, ``foldmem ingest`` to the
embedded store or to Kafka, ``POST /tenants/{t}/events``).

Each source owns its reading and its checkpoint (:mod:`stream_app.ingest.sources`); the
driver owns the rest:

- **Order and batching.** Events go to one queue per tenant; a tenant's worker hands the
  target what its queue holds (up to ``batch_size``, waiting up to ``batch_wait_s`` for it to
  fill) as one batch, so a tenant's events are delivered in the order read while tenants
  proceed concurrently (at most ``max_tenants`` delivering at once). What the queue holds
  beyond the batch (up to one more batch) is taken with it and handed to the target as
  ``ahead``, to embed while the batch folds; it is the tenant's next batch.
- **Busy tenants.** A :class:`~stream_app.hub.protocol.TransientError` outcome (another process
  holds the tenant, a worker is moving it) is tried again with backoff (:class:`BusyPolicy`),
  never dead-lettered: until stopped (the runner; the source does not pass the event, so it is
  read again at the next start), a few times then :class:`DeliveryError` (an import: run the
  same command again), or not at all (HTTP: the caller answers 503).
- **Dead letters.** A bad item or a refused event is written to the dead-letter file with its
  source, location and reason; a source read again reports each bad item once (the ledger).
  A failed fold is dead-lettered as ``fold_failed``.
- **Stats and progress** (:class:`IngestStats`, :class:`stream_app.ingest.progress.Progress`).

Stopping (``stop`` set: a signal) ends the reading; folds in flight finish, queued events are
left to the next run (no checkpoint passes them). ``limit`` ends the reading once that many
events were handed on, and what was handed on is delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

import structlog

from connectors.base import BadItem
from schemas.errors import FoldmemError, InvalidEventError
from schemas.events import RawEvent
from stream_app.hub.protocol import Checkpoint, CheckpointFn, TransientError
from stream_app.ingest.deadletter import DeadLetter
from stream_app.ingest.progress import Progress
from stream_app.ingest.sources import Outcome, Read, Source
from stream_app.ingest.stats import IngestStats
from stream_app.ingest.targets import DeliveryError, Target
from topologies.engine import FoldResult

log = structlog.get_logger(__name__)


class Reported(Protocol):
    """The record of bad items already reported (the ledger's ``bad`` table)."""

    def first_report(self, source: str, location: str, reason: str) -> bool: ...


@dataclass(frozen=True)
class BusyPolicy:
    """How often a batch whose tenant is busy is tried again: ``attempts`` None = until
    stopped; when they run out, ``abort`` raises DeliveryError, else the outcome stays."""

    attempts: int | None = None
    first_delay_s: float = 0.05
    max_delay_s: float = 5.0
    abort: bool = False


@dataclass(eq=False)
class _Work:
    read: Read
    event: RawEvent
    advance: Callable[[int], None]  # the source's progress


@dataclass
class _SourceState:
    outstanding: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)


class IngestDriver:
    def __init__(
        self,
        target: Target,
        *,
        deadletter: DeadLetter | None,
        reported: Reported | None = None,
        busy: BusyPolicy | None = None,
        stop: asyncio.Event | None = None,
        progress: Progress | None = None,
        max_tenants: int = 4,
        queue_size: int = 256,
        batch_size: int = 64,
        batch_wait_s: float = 0.0,
        limit: int | None = None,
        dry_run: TextIO | None = None,
        notices: TextIO | None = None,
        on_outcome: Callable[[Read, Outcome], None] | None = None,
    ) -> None:
        self.target = target
        self.deadletter = deadletter
        self.reported = reported  # bad items reported before, when a source is read again
        self.busy = busy or BusyPolicy()
        self.stop = stop or asyncio.Event()
        self.progress = progress or Progress()
        self.batch_size = batch_size
        self.batch_wait_s = batch_wait_s  # how long a batch may wait to fill
        self.queue_size = queue_size
        self.limit = limit
        self.dry_run = dry_run  # a dry run: bad items printed here, nothing written
        self.notices = notices
        self.on_outcome = on_outcome
        self.stats = IngestStats()
        self._semaphore = asyncio.Semaphore(max_tenants)
        self._queues: dict[str, asyncio.Queue[_Work]] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._sources: dict[int, _SourceState] = defaultdict(_SourceState)
        self._handed = 0
        self._busy = 0
        self._busy_since = 0.0
        self._failure: BaseException | None = None

    # -------------------------------------------------------------------- run
    async def run(self, sources: Sequence[Source], *, one_at_a_time: bool = False) -> IngestStats:
        """Read every source to its end (one-shot sources) or until stopped, deliver what was
        read, and return the stats. ``one_at_a_time``: a source is read and delivered before
        the next one is opened (an import)."""
        started = time.perf_counter()
        try:
            if one_at_a_time:
                for source in sources:
                    if self.stop.is_set() or self._limit_reached():
                        break
                    await self._until_stopped(self.read(source))
            else:
                await self._until_stopped(
                    asyncio.gather(*(self.read(source) for source in sources))
                )
            await self._until_stopped(self._drain())
            self._raise_failure()
            self.stats.interrupted = self.stats.interrupted or self.stop.is_set()
        finally:
            await self.close()
            self.stats.seconds += time.perf_counter() - started
        return self.stats

    async def read(self, source: Source) -> None:
        """One source: read it, deliver what it holds, tell it whether it got to its end."""
        if self._limit_reached():
            return
        reason = source.skipped()
        if reason is not None:
            self.stats.unchanged_sources += 1
            if self.notices is not None:
                print(f"{source.name}: {reason}", file=self.notices)
            return
        advance = self.progress.task(source)
        complete = True
        async for read in source.reads(self.stop):
            self.stats.read += read.items
            if isinstance(read.item, BadItem):
                self._bad(read, read.item.reason, once=source.reports_once)
                source.done([(read, None)])
                advance(read.items)
            elif source.passed(read):
                self.stats.already_sent += 1
                source.done([(read, None)])
                advance(1)
            else:
                await self._hand_on(_Work(read, read.item, advance))
            self._raise_failure()
            if self.stop.is_set() or self._limit_reached():
                complete = False
                break
        await self._settled(source)
        self._raise_failure()
        source.finish(complete and not self.stop.is_set())

    def _limit_reached(self) -> bool:
        if self.limit is None or self._handed < self.limit:
            return False
        self.stats.interrupted = True
        return True

    async def _until_stopped(self, awaitable: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(awaitable)
        stopper = asyncio.create_task(self.stop.wait())
        done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if task in done:
            task.result()
            return
        self.stats.interrupted = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    # --------------------------------------------------------------- queueing
    async def _hand_on(self, work: _Work) -> None:
        self._handed += 1
        state = self._sources[id(work.read.source)]
        state.outstanding += 1
        state.idle.clear()
        tenant = work.event.tenant
        queue = self._queues.get(tenant)
        if queue is None:
            queue = self._queues[tenant] = asyncio.Queue(self.queue_size)
            self._workers.append(asyncio.create_task(self._worker(queue)))
        await queue.put(work)

    async def _settled(self, source: Source) -> None:
        state = self._sources[id(source)]
        if state.outstanding:
            await state.idle.wait()

    async def _drain(self) -> None:
        for queue in list(self._queues.values()):
            await queue.join()

    async def _worker(self, queue: asyncio.Queue[_Work]) -> None:
        held: list[_Work] = []  # the next batch, as far as the queue held it
        while True:
            batch = await self._take(queue, held)
            held = self._take_queued(queue)
            try:
                if not self.stop.is_set():
                    async with self._semaphore:
                        self._start_busy()
                        try:
                            await self._deliver(batch, [work.event for work in held])
                        finally:
                            self._end_busy()
            except Exception as exc:  # DeliveryError (an import stops), or a bug
                self._failure = self._failure or exc
                self.stop.set()
            finally:
                for work in batch:
                    self._release(work.read.source)
                    queue.task_done()

    def _start_busy(self) -> None:
        if self._busy == 0:
            self._busy_since = time.perf_counter()
        self._busy += 1

    def _end_busy(self) -> None:
        """A delivery ended: when none is left, the time since the first began was spent
        folding (a run that follows its sources also waits for them, which this leaves out)."""
        self._busy -= 1
        if self._busy == 0:
            self.stats.folding_seconds += time.perf_counter() - self._busy_since

    async def _take(self, queue: asyncio.Queue[_Work], held: list[_Work]) -> list[_Work]:
        """Up to ``batch_size`` events: those ``held`` from the queue already, else its first;
        then what the queue holds, and for ``batch_wait_s`` what arrives (polled: a cancelled
        ``get`` could lose an event)."""
        batch = held or [await queue.get()]
        deadline = time.monotonic() + self.batch_wait_s
        while len(batch) < self.batch_size:
            if not queue.empty():
                batch.append(queue.get_nowait())
                continue
            left = deadline - time.monotonic()
            if left <= 0 or self.stop.is_set():
                break
            await asyncio.sleep(min(left, 0.005))
        return batch

    def _take_queued(self, queue: asyncio.Queue[_Work]) -> list[_Work]:
        """Up to ``batch_size`` events the queue holds now, without waiting: the tenant's next
        batch, delivered after the one taken before them (and released as theirs)."""
        taken: list[_Work] = []
        while len(taken) < self.batch_size and not queue.empty():
            taken.append(queue.get_nowait())
        return taken

    def _release(self, source: Source) -> None:
        state = self._sources[id(source)]
        state.outstanding -= 1
        if state.outstanding <= 0:
            state.idle.set()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    # --------------------------------------------------------------- delivery
    async def _deliver(self, batch: list[_Work], ahead: Sequence[RawEvent] = ()) -> None:
        """Deliver the batch, trying again what a busy tenant sends back; ``ahead``: the
        events to deliver next."""
        pending = batch
        delay = self.busy.first_delay_s
        attempt = 0
        while pending:
            attempt += 1
            try:
                outcomes = await self.target.deliver(
                    [w.event for w in pending], _positions(pending), ahead
                )
            except DeliveryError as exc:
                self._finished(
                    [(w, o) for w, o in zip(pending, exc.outcomes, strict=False) if o is not None]
                )
                raise
            busy = [w for w, o in zip(pending, outcomes, strict=True) if _busy(o)]
            self._finished([(w, o) for w, o in zip(pending, outcomes, strict=True) if not _busy(o)])
            if not busy:
                return
            reason = next(o for o in outcomes if _busy(o))
            if self.stop.is_set():
                log.info("fold_postponed", tenant=busy[0].event.tenant, events=len(busy))
                return  # read again at the next start: no checkpoint passes them
            if self.busy.attempts is not None and attempt >= self.busy.attempts:
                if self.busy.abort:
                    raise DeliveryError(
                        f"event {busy[0].event.id} not folded: {reason}; run the same command "
                        "again to go on"
                    )
                self._finished([(w, reason) for w in busy])
                return
            log.info(
                "fold_retry_busy",
                tenant=busy[0].event.tenant,
                event_id=busy[0].event.id,
                error=str(reason),
                delay=round(delay, 2),
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), timeout=delay)
            delay = min(delay * 2, self.busy.max_delay_s)
            pending = busy

    def _finished(self, done: Sequence[tuple[_Work, Outcome]]) -> None:
        by_source: dict[int, list[tuple[Read, Outcome | None]]] = defaultdict(list)
        for work, outcome in done:
            self._count(work.read, outcome)
            if self.on_outcome is not None:
                self.on_outcome(work.read, outcome)
            work.advance(1)
            if not _busy(outcome):  # a busy one is not done: no checkpoint may pass it
                by_source[id(work.read.source)].append((work.read, outcome))
        for finished in by_source.values():
            finished[0][0].source.done(finished)

    def _count(self, read: Read, outcome: Outcome) -> None:
        stats = self.stats
        if isinstance(outcome, TransientError):
            return
        if isinstance(outcome, InvalidEventError):  # refused: a time too far ahead, forgotten
            self._bad(read, outcome.reason, once=True)
        elif isinstance(outcome, FoldmemError):
            stats.sent += 1  # handed on (an import reads the source again: it is not complete)
            stats.failed += 1
            if self.deadletter is not None:
                self.deadletter.write(read.source.name, read.location, str(outcome), "fold_failed")
        else:
            stats.sent += 1
            if isinstance(outcome, FoldResult):
                if outcome.status == "duplicate":
                    stats.duplicates += 1
                else:
                    stats.folded += 1
                    stats.intents += len(outcome.messages)
                    log.debug(
                        "event_folded",
                        tenant=outcome.tenant,
                        event_id=outcome.event_id,
                        status=outcome.status,
                        ops=outcome.ops,
                        ms=round(outcome.fold_seconds * 1000, 2),
                    )

    def _bad(self, read: Read, reason: str, *, once: bool) -> None:
        """Report a bad item or a refused event (once per data dir when ``once``)."""
        if self.dry_run is not None:
            self.stats.dead_lettered += 1
            print(f"bad {read.location}: {reason}", file=self.dry_run)
            return
        key = read.source.key or read.source.name
        if (
            once
            and self.reported is not None
            and not self.reported.first_report(key, read.location, reason)
        ):
            self.stats.reported_before += 1
            return
        self.stats.dead_lettered += 1
        if self.deadletter is not None:
            self.deadletter.write(read.source.name, read.location, reason)

    # ------------------------------------------------------------------ close
    async def close(self, grace: float = 30.0) -> None:
        """Let the deliveries in flight finish (up to ``grace`` seconds), then stop."""
        deadline = time.monotonic() + grace
        while self._busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers.clear()
        self._queues.clear()


def _positions(batch: Sequence[_Work]) -> CheckpointFn:
    """The source positions each event's fold commits (the event as it was handed on)."""
    reads = {id(work.event): work.read for work in batch}

    def checkpoints(event: RawEvent) -> Sequence[Checkpoint]:
        read = reads.get(id(event))
        return read.source.checkpoints(read) if read is not None else ()

    return checkpoints


def _busy(outcome: Outcome) -> bool:
    return isinstance(outcome, TransientError)
