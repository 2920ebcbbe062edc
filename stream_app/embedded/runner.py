"""The embedded always-on runner: sources -> per-tenant folds -> store, intents, read API.

- JSONL sources resume from the offset stored with the last fold and follow the file like
  ``tail -f`` (unless ``once``); other kinds come from ``connectors.detect.open_source``
  (re-read when the file changes; dedup by event id makes that cheap).
- One worker per tenant keeps that tenant's events in order; a semaphore bounds how many
  tenants fold at once.
- Invalid items go to DATA_DIR/deadletter.jsonl with the reason (the field) and location.
- Intents are printed and appended to DATA_DIR/intents.jsonl (through the hub's outbox).
- The read API is served in the same event loop; the decay sweep runs periodically.
- SIGINT/SIGTERM stop reading, finish the fold in flight, save offsets and exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import orjson
import structlog

from schemas.errors import ConfigError, FoldmemError, InvalidEventError
from schemas.events import RawEvent
from stream_app.embedded.files import append_line
from stream_app.embedded.hub import MemoryHub
from stream_app.embedded.store import Checkpoint, TransientStoreError
from stream_app.settings import Settings

log = structlog.get_logger(__name__)

JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class RunOptions:
    sources: list[Path]
    once: bool = False
    tenant: str | None = None
    serve_api: bool = True
    kind: str | None = None  # source kind for connectors (None: detect)
    progress: bool | None = None  # None: on a TTY in --once mode
    urls: list[str] = field(default_factory=list)  # imap[s]://user@host/FOLDER (issue 5)


@dataclass
class RunStats:
    read: int = 0
    folded: int = 0
    duplicates: int = 0
    dead_lettered: int = 0
    failed: int = 0
    intents: int = 0
    refolded: int = 0
    known_bad: int = 0  # bad items dead-lettered by an earlier run
    seconds: float = 0.0

    def line(self) -> str:
        rate = self.folded / self.seconds if self.seconds > 0 else 0.0
        return (
            f"read {self.read}, folded {self.folded}, duplicates {self.duplicates}, "
            f"dead-lettered {self.dead_lettered + self.failed}"
            + (f" (+{self.known_bad} reported before)" if self.known_bad else "")
            + f", intents emitted {self.intents}, "
            f"{self.seconds:.1f}s ({rate:.1f} events/s)"
        )


class OffsetTracker:
    """The resume offset of one file: the end of the longest prefix of finished items."""

    def __init__(self, key: str, inode: int | None, start: int) -> None:
        self.key = key
        self.inode = inode
        self.safe = start
        self._pending: deque[tuple[int, int]] = deque()  # (token, end offset)
        self._done: set[int] = set()
        self._next = 0

    def add(self, end_offset: int) -> int:
        self._next += 1
        self._pending.append((self._next, end_offset))
        return self._next

    def done(self, token: int) -> None:
        self._done.add(token)
        while self._pending and self._pending[0][0] in self._done:
            tok, end = self._pending.popleft()
            self._done.discard(tok)
            self.safe = end

    def safe_if_done(self, token: int) -> int:
        safe = self.safe
        for tok, end in self._pending:
            if tok != token and tok not in self._done:
                break
            safe = end
        return safe

    def reset(self, inode: int | None) -> None:
        self._pending.clear()
        self._done.clear()
        self.inode = inode
        self.safe = 0


@dataclass
class _Work:
    event: RawEvent
    source: str
    tracker: OffsetTracker | None = None
    token: int = 0


class _Postponed(Exception):
    """A fold given up because the runner is stopping; the event is read again next time."""


_BUSY_FIRST_DELAY_S = 0.05
_BUSY_MAX_DELAY_S = 5.0


@dataclass
class _Progress:
    advance: Callable[[int], None] = field(default=lambda n: None)


class DeadLetter:
    """Appends rejected items to DATA_DIR/deadletter.jsonl: never silently dropped."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(
        self,
        source: str,
        location: str,
        reason: str,
        kind: str = "invalid",
        *,
        tenant: str | None = None,
        event_id: str | None = None,
    ) -> None:
        """``tenant`` and ``event_id``, when known, let a deletion find the record."""
        record: dict[str, str] = {
            "at": datetime.now(UTC).isoformat(),
            "kind": kind,
            "source": source,
            "location": location,
            "reason": reason,
        }
        if tenant is not None:
            record["tenant"] = tenant
        if event_id is not None:
            record["event_id"] = event_id
        append_line(self.path, orjson.dumps(record))
        log.warning("dead_letter", source=source, location=location, reason=reason, kind=kind)


@contextlib.contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """One runner per data dir (a second one would fold the same files twice)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = path.open("a+")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ConfigError(
                f"another `foldmem run` is using {path.parent} (lock {path.name}); stop it first"
            ) from exc
        fh.truncate(0)
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()


def source_key(path: Path) -> str:
    return f"file:{path.resolve()}"


class Runner:
    def __init__(
        self,
        settings: Settings,
        hub: MemoryHub,
        options: RunOptions,
        app_factory: Callable[[], Any] | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.settings = settings
        self.hub = hub
        self.options = options
        self.app_factory = app_factory
        self.out = out or sys.stdout
        self.stats = RunStats()
        self.deadletter = DeadLetter(settings.deadletter_path)
        self.stop = asyncio.Event()
        self._queues: dict[str, asyncio.Queue[_Work]] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._trackers: list[OffsetTracker] = []
        self._semaphore = asyncio.Semaphore(settings.max_concurrent_tenants)
        self._progress = _Progress()
        self._busy = 0
        self._ledger: Any = None  # stream_app.ingest.importer.Ledger, opened at the first bad item
        self.api_url: str | None = None

    # ------------------------------------------------------------------- main
    async def run(self) -> RunStats:
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        for path in self.options.sources:
            if not path.exists() and self.options.once:
                raise ConfigError(f"source {path} does not exist")
        server = None
        sweeper: asyncio.Task[None] | None = None
        outbox: asyncio.Task[None] | None = None
        try:
            self.hub.publish_pending()
            self.stats.refolded = await self.hub.recover()
            if self.options.serve_api and self.app_factory is not None:
                from stream_app.api.server import ApiServer

                server = ApiServer(
                    self.app_factory(),
                    self.settings.api_host,
                    self.settings.api_port,
                    log_level=self.settings.log_level,
                    hint="choose another port with --api-port or FOLDMEM_API_PORT, "
                    "or run without the API: --no-api",
                )
                server.start()
                await server.started()
                self.api_url = server.url
                print(f"read API on {server.url} (OpenAPI: {server.url}/docs)", file=self.out)
            if self.settings.sweep_interval > 0 and not self.options.once:
                sweeper = asyncio.create_task(self._sweep_loop())
            if not self.options.once:
                outbox = asyncio.create_task(self._outbox_loop())
            with self._progress_view():
                readers = [asyncio.create_task(self._read(path)) for path in self.options.sources]
                readers += [asyncio.create_task(self._read_imap(u)) for u in self.options.urls]
                if self.options.once:
                    await self._until_stopped(asyncio.gather(*readers))
                    await self._until_stopped(self._drain())
                else:
                    if not self.options.sources and not self.options.urls:
                        print("no sources: serving the API only (Ctrl-C to stop)", file=self.out)
                    await self.stop.wait()
                self.stop.set()
                for task in readers:
                    task.cancel()
                await asyncio.gather(*readers, return_exceptions=True)
                for reader_result in readers:
                    if not reader_result.cancelled() and reader_result.exception() is not None:
                        raise reader_result.exception()  # type: ignore[misc]
        finally:
            await self._stop_workers()
            self._save_checkpoints()
            if outbox is not None:
                outbox.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await outbox
            self.hub.publish_pending(wait_s=10.0)
            if self._ledger is not None:
                self._ledger.close()
            if sweeper is not None:
                sweeper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeper
            if server is not None:
                await server.stop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            self.stats.seconds = time.perf_counter() - started
        return self.stats

    def _on_signal(self, sig: int) -> None:
        log.info("stopping", signal=signal.Signals(sig).name)
        self.stop.set()

    async def _until_stopped(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        stopper = asyncio.create_task(self.stop.wait())
        done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if task in done:
            task.result()
        else:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _drain(self) -> None:
        """Wait until every queued event is folded (the readers have finished)."""
        for queue in list(self._queues.values()):
            await queue.join()

    # ---------------------------------------------------------------- reading
    async def _read(self, path: Path) -> None:
        kind = self.options.kind
        if kind == "jsonl" or (kind is None and _is_event_jsonl(path)):
            await self._read_jsonl(path)
        else:
            await self._read_other(path, kind)

    def _tenant(self) -> str:
        return self.options.tenant or self.settings.default_tenant

    async def _read_jsonl(self, path: Path) -> None:
        from connectors.base import BadItem, RefusalTally
        from connectors.jsonl import JsonlSource

        key = source_key(path)
        saved = self.hub.store.checkpoint(key)
        inode = _inode(path)
        start = 0
        if saved is not None and (saved.inode is None or saved.inode == inode):
            size = path.stat().st_size if path.exists() else 0
            start = saved.offset if saved.offset <= size else 0
        tracker = OffsetTracker(key, inode, start)
        self._trackers.append(tracker)
        source = JsonlSource(path, self._tenant(), offset=start, complete_tail=self.options.once)
        log.info("source_opened", source=str(path), kind="jsonl", offset=start)
        items: AsyncIterator[tuple[Any, int]]
        if self.options.once:
            items = _aiter(source.read_from(start, final=True))
        else:
            items = source.follow(self.settings.poll_interval, self.stop)
        last_end = start
        tally = RefusalTally(str(path))
        async for item, end in items:
            if end < last_end:  # the file was truncated or replaced: start over
                tracker.reset(_inode(path))
            last_end = end
            token = tracker.add(end)
            tally.count(item)
            if isinstance(item, BadItem):
                self.stats.read += 1
                self.stats.dead_lettered += 1
                self.deadletter.write(str(path), item.location, item.reason)
                tracker.done(token)
                self._progress.advance(1)
                continue
            await self._dispatch(_Work(item, str(path), tracker, token))
        if self.options.once and start == 0 and tally.refused:
            # each line was reported (offsets move line by line); say that the file as a whole
            # is not an event stream
            summary = tally.summary()
            self.deadletter.write(str(path), summary.location, summary.reason)

    async def _read_other(self, path: Path, kind: str | None) -> None:
        from connectors.base import BadItem, refusing_whole_files
        from stream_app.ingest.importer import open_ref, ref_key

        seen_mtime: float | None = None
        while not self.stop.is_set():
            mtime = path.stat().st_mtime if path.exists() else None
            if mtime is not None and mtime != seen_mtime:
                seen_mtime = mtime
                source = open_ref(path, self._tenant(), kind, self.settings)
                log.info("source_opened", source=str(path), kind=getattr(source, "kind", kind))
                items = refusing_whole_files(str(path), source.read())
                for count, item in enumerate(items, start=1):
                    if isinstance(item, BadItem):
                        self._bad_item(ref_key(path), str(path), item)
                    else:
                        await self._dispatch(_Work(item, str(path)))
                    if count % 64 == 0:
                        await asyncio.sleep(0)
            if self.options.once:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self.stop.wait(), timeout=max(self.settings.poll_interval, 1.0)
                )

    def _bad_item(self, key: str, source: str, item: Any) -> None:
        """Dead-letter a bad item once per data dir (a re-read file does not repeat it)."""
        self.stats.read += item.items
        self._progress.advance(item.items)
        self._report_once(source, item.location, item.reason, key)

    def _report_once(self, source: str, location: str, reason: str, key: str = "") -> None:
        if self._ledger is None:
            from stream_app.ingest.importer import Ledger

            self._ledger = Ledger(self.settings.ingest_db_path)
        if self._ledger.first_report(key or source, location, reason):
            self.stats.dead_lettered += 1
            self.deadletter.write(source, location, reason)
        else:
            self.stats.known_bad += 1

    async def _read_imap(self, url: str) -> None:
        """Poll an IMAP folder; a message is folded before the UID checkpoint passes it."""
        from connectors.base import BadItem
        from stream_app.ingest.importer import imap_checkpoint_path, open_ref

        source = open_ref(
            url,
            self._tenant(),
            None,
            self.settings,
            imap_checkpoint=imap_checkpoint_path(self.settings, url),
        )
        log.info("source_opened", source=source.name, kind="imap")
        done = object()
        while not self.stop.is_set():
            items = source.read()
            try:
                while not self.stop.is_set():
                    try:
                        item = await asyncio.to_thread(next, items, done)
                    except FoldmemError:
                        raise
                    except Exception as exc:  # network trouble: try again at the next poll
                        if self.options.once:
                            raise ConfigError(f"{source.name}: {exc}") from exc
                        log.warning("imap_poll_failed", source=source.name, error=str(exc))
                        break
                    if item is done:
                        break
                    if isinstance(item, BadItem):
                        self._bad_item(source.name, source.name, item)
                    elif isinstance(item, RawEvent):
                        self.stats.read += 1
                        await self._fold(_Work(item, source.name))
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    await asyncio.to_thread(close)
            if self.options.once:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), timeout=self.settings.imap_poll_interval)

    async def _dispatch(self, work: _Work) -> None:
        self.stats.read += 1
        tenant = work.event.tenant
        queue = self._queues.get(tenant)
        if queue is None:
            queue = self._queues[tenant] = asyncio.Queue(self.settings.tenant_queue_size)
            self._workers.append(asyncio.create_task(self._worker(queue)))
        await queue.put(work)

    # ---------------------------------------------------------------- folding
    async def _worker(self, queue: asyncio.Queue[_Work]) -> None:
        while True:
            work = await queue.get()
            try:
                if not self.stop.is_set():
                    async with self._semaphore:
                        self._busy += 1
                        try:
                            await self._fold(work)
                        finally:
                            self._busy -= 1
            finally:
                queue.task_done()

    async def _fold(self, work: _Work) -> None:
        tracker, token = work.tracker, work.token

        def checkpoints() -> list[Checkpoint]:
            if tracker is None:
                return []
            return [Checkpoint(tracker.key, tracker.safe_if_done(token), tracker.inode)]

        try:
            result = await self._fold_retrying(work, checkpoints)
        except _Postponed:  # stopping while another process held the tenant: read it again
            return  # at the next start (the offset does not pass it)
        except InvalidEventError as exc:  # refused at admission (a time too far ahead)
            self._report_once(work.source, f"event {work.event.id}", exc.reason)
        except FoldmemError as exc:
            self.stats.failed += 1
            self.deadletter.write(work.source, f"event {work.event.id}", str(exc), "fold_failed")
        except Exception as exc:  # a bug must not stop the stream; the event stays "stored"
            self.stats.failed += 1
            log.exception("fold_crashed", tenant=work.event.tenant, event_id=work.event.id)
            self.deadletter.write(
                work.source, f"event {work.event.id}", f"{type(exc).__name__}: {exc}", "fold_failed"
            )
        else:
            if result.status == "duplicate":
                self.stats.duplicates += 1
            else:
                self.stats.folded += 1
                self.stats.intents += len(result.messages)
                log.debug(
                    "event_folded",
                    tenant=result.tenant,
                    event_id=result.event_id,
                    status=result.status,
                    ops=result.ops,
                    ms=round(result.fold_seconds * 1000, 2),
                )
        if tracker is not None:
            tracker.done(token)
        self._progress.advance(1)

    async def _fold_retrying(self, work: _Work, checkpoints: Callable[[], list[Checkpoint]]) -> Any:
        """hub.fold, tried again (with backoff) while another process holds or just changed the
        tenant: a conflict is transient and never a reason to dead-letter an event."""
        delay = _BUSY_FIRST_DELAY_S
        while True:
            try:
                return await self.hub.fold(work.event, checkpoints)
            except TransientStoreError as exc:
                if self.stop.is_set():
                    log.info("fold_postponed", tenant=work.event.tenant, event_id=work.event.id)
                    raise _Postponed from exc
                log.info(
                    "fold_retry_busy",
                    tenant=work.event.tenant,
                    event_id=work.event.id,
                    error=str(exc),
                    delay=round(delay, 2),
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), timeout=delay)
                delay = min(delay * 2, _BUSY_MAX_DELAY_S)

    async def _stop_workers(self, grace: float = 30.0) -> None:
        """Let the folds in flight finish (up to `grace` seconds), then stop the workers."""
        deadline = time.monotonic() + grace
        while self._busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers.clear()

    def _save_checkpoints(self) -> None:
        if self._trackers:
            self.hub.store.save_checkpoints(
                Checkpoint(t.key, t.safe, t.inode) for t in self._trackers
            )

    async def _outbox_loop(self, every_s: float = 1.0) -> None:
        """Publish intent messages another process (``foldmem ingest``, ``foldmem serve``)
        committed to this data dir's outbox, as this runner's own."""
        while not self.stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), timeout=every_s)
            self.hub.publish_pending()

    async def _sweep_loop(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), timeout=self.settings.sweep_interval)
            if self.stop.is_set():
                return
            try:
                pruned = await self.hub.sweep()
                log.info("decay_sweep", changed=sum(pruned.values()), tenants=len(pruned))
                await self.hub.nightly_if_due()
            except FoldmemError as exc:
                log.error("decay_sweep_failed", error=str(exc))

    # --------------------------------------------------------------- progress
    @contextlib.contextmanager
    def _progress_view(self) -> Iterator[None]:
        wanted = self.options.progress
        if wanted is None:
            wanted = self.options.once and self.out.isatty()
        if not wanted:
            yield
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        total = sum(_count_lines(p) for p in self.options.sources) or None
        with Progress(
            TextColumn("folding"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            redirect_stdout=True,
            transient=True,
        ) as progress:
            task = progress.add_task("fold", total=total)
            self._progress = _Progress(lambda n: progress.advance(task, n))
            try:
                yield
            finally:
                self._progress = _Progress()


async def _aiter(items: Iterator[tuple[Any, int]]) -> AsyncIterator[tuple[Any, int]]:
    for count, item in enumerate(items, start=1):
        yield item
        if count % 64 == 0:
            await asyncio.sleep(0)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _is_event_jsonl(path: Path) -> bool:
    """A .jsonl/.ndjson file of RawEvents (read by offset); chat JSONL goes to the connectors."""
    if path.suffix.lower() not in JSONL_SUFFIXES:
        return False
    try:
        from connectors.detect import detect_kind

        return detect_kind(path) == "jsonl"
    except Exception:  # empty, not yet created or unreadable: a RawEvent stream to follow
        return True


def _count_lines(path: Path) -> int:
    if path.suffix.lower() not in JSONL_SUFFIXES or not path.exists():
        return 0
    count = 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            count += chunk.count(b"\n")
    return count


def run_blocking(runner_factory: Callable[[], Runner]) -> RunStats:
    """asyncio.run a Runner built inside the loop."""

    async def main() -> RunStats:
        return await runner_factory().run()

    return asyncio.run(main())


__all__: Sequence[str] = ["DeadLetter", "OffsetTracker", "RunOptions", "RunStats", "Runner"]
