"""The embedded always-on runner (``foldmem run``): its sources through the ingest driver into
the hub, intents out through the hub's outbox, the read API, the periodic upkeep.

- Sources (:mod:`stream_app.ingest.sources`): RawEvent JSONL resumes from the offset stored
  with the last fold and is followed like ``tail -f`` (unless ``once``); other kinds come
  from their connector (read again when the file changes; dedup by event id makes that
  cheap); IMAP folders are polled.
- The driver (:mod:`stream_app.ingest.driver`) keeps each tenant's events in order, folds
  tenants concurrently, retries a tenant another process holds (never dead-letters for it),
  and dead-letters what is invalid to DATA_DIR/deadletter.jsonl with the reason and location.
- Intents are printed and appended to DATA_DIR/intents.jsonl (the hub's outbox; rows other
  processes committed to this data dir are published too).
- The read API is served in the same event loop; the decay sweep and, for idle tenants, the
  nightly engine run periodically.
- At start-up, an event stored but not folded (a crash between the two commits) is folded.
- SIGINT/SIGTERM stop reading, finish the folds in flight, save offsets and exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import structlog

from schemas.errors import ConfigError, FoldmemError
from stream_app.collector import tune_collector
from stream_app.embedded.hub import MemoryHub
from stream_app.ingest.deadletter import DeadLetter
from stream_app.ingest.driver import BusyPolicy, IngestDriver
from stream_app.ingest.ledger import OpenedOnUse
from stream_app.ingest.progress import progress_bars
from stream_app.ingest.sources import FileSource, ImapSource, Source, imap_checkpoint_path
from stream_app.ingest.stats import IngestStats
from stream_app.ingest.tail import JsonlTail, is_event_jsonl
from stream_app.ingest.targets import HubTarget
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


@dataclass
class RunOptions:
    sources: list[Path]
    once: bool = False
    tenant: str | None = None
    serve_api: bool = True
    kind: str | None = None  # source kind for connectors (None: detect)
    progress: bool | None = None  # None: on a TTY in --once mode
    urls: list[str] = field(default_factory=list)  # imap[s]://user@host/FOLDER


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
        self.stop = asyncio.Event()
        self._reported = OpenedOnUse(settings.ingest_db_path)
        self.driver = IngestDriver(
            HubTarget(hub),
            deadletter=DeadLetter(settings.deadletter_path),
            reported=self._reported,
            busy=BusyPolicy(),  # until stopped: a busy tenant is never a reason to drop
            stop=self.stop,
            max_tenants=settings.max_concurrent_tenants,
            queue_size=settings.tenant_queue_size,
            batch_size=settings.fold_batch_size,
            batch_wait_s=settings.fold_batch_ms / 1000.0,
        )
        self.stats: IngestStats = self.driver.stats
        self.api_url: str | None = None

    def sources(self) -> list[Source]:
        settings, options = self.settings, self.options
        tenant = options.tenant or settings.default_tenant
        follow = not options.once
        found: list[Source] = []
        for path in options.sources:
            if options.kind == "jsonl" or (options.kind is None and is_event_jsonl(path)):
                found.append(
                    JsonlTail(
                        path,
                        tenant,
                        self.hub.store,
                        follow=follow,
                        poll_interval=settings.poll_interval,
                    )
                )
            else:
                found.append(
                    FileSource(path, tenant, options.kind, settings, name=str(path), follow=follow)
                )
        for url in options.urls:
            checkpoint = imap_checkpoint_path(settings, url)
            found.append(ImapSource(url, tenant, settings, checkpoint=checkpoint, follow=follow))
        return found

    # ------------------------------------------------------------------- main
    async def run(self) -> IngestStats:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        for path in self.options.sources:
            if not path.exists() and self.options.once:
                raise ConfigError(f"source {path} does not exist")
        server = None
        upkeep: list[asyncio.Task[None]] = []
        delivering: asyncio.Task[None] | None = None
        sources: list[Source] = []
        try:
            # models load off the event loop, before the API serves and the folds begin
            await asyncio.to_thread(self.hub.engine.warm_up)
            tune_collector(self.settings.gc_threshold)
            await self.hub.publish_pending()
            self.stats.refolded = await self.hub.recover()
            if self.options.serve_api and self.app_factory is not None:
                server = await self._serve_api()
            # intents out: the inline sinks after each fold, a webhook in the background, and
            # rows other processes (`foldmem ingest`, `foldmem serve`) commit to this data dir
            delivering = asyncio.create_task(self.hub.outputs.run(self.stop))
            if not self.options.once and self.settings.sweep_interval > 0:
                upkeep.append(asyncio.create_task(self._sweep_loop()))
            sources = self.sources()
            if not sources and not self.options.once:
                print("no sources: serving the API only (Ctrl-C to stop)", file=self.out)
            shown = self.options.progress
            if shown is None:
                shown = self.options.once and self.out.isatty()
            with progress_bars(self.out, shown=shown, transient=True) as progress:
                self.driver.progress = progress
                if sources:
                    await self.driver.run(sources)
                if not self.options.once:
                    await self.stop.wait()
        finally:
            self.stop.set()
            await self.driver.close()
            for source in sources:
                if isinstance(source, JsonlTail):
                    source.save()
            for task in upkeep:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if delivering is not None:
                await delivering  # its pass under way ends (a cancelled POST could repeat)
            await self.hub.close_outputs()  # drained, the rest kept for the next process
            self._reported.close()
            if server is not None:
                await server.stop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
        return self.stats

    def _on_signal(self, sig: int) -> None:
        log.info("stopping", signal=signal.Signals(sig).name)
        self.stop.set()

    async def _serve_api(self) -> Any:
        from stream_app.api.server import ApiServer

        assert self.app_factory is not None
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
        return server

    # ------------------------------------------------------------------ upkeep
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


def run_blocking(runner_factory: Callable[[], Runner]) -> IngestStats:
    """asyncio.run a Runner built inside the loop."""

    async def main() -> IngestStats:
        return await runner_factory().run()

    return asyncio.run(main())
