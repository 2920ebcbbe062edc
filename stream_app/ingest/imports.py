"""``foldmem ingest``: sources imported once into the embedded store or the Kafka events topic,
with a progress bar and a checkpoint (an interrupted import resumes where it stopped).

The sources are read one after the other through the ingest driver; the ledger
(DATA_DIR/ingest.db, :mod:`stream_app.ingest.ledger`) is their checkpoint: what it holds as
delivered to this target is passed over, an unchanged source is not read, each bad item is
reported once. A tenant another process keeps busy is waited for a while, then the import
stops with an error that says to run the same command again.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence
from typing import Protocol, TextIO

import structlog

from stream_app.ingest.deadletter import DeadLetter
from stream_app.ingest.driver import BusyPolicy, IngestDriver
from stream_app.ingest.ledger import Ledger
from stream_app.ingest.progress import progress_bars
from stream_app.ingest.sources import Ref, Sent, open_sources
from stream_app.ingest.stats import IngestStats
from stream_app.ingest.targets import Target
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


class DataDirHub(Protocol):
    """What an import into the embedded store does with its hub before and after."""

    async def publish_pending(self) -> None: ...

    async def recover(self) -> int: ...

    async def close_outputs(self) -> None: ...


# a tenant another process writes: tried six times over about half a minute
IMPORT_BUSY = BusyPolicy(attempts=6, first_delay_s=0.5, max_delay_s=16.0, abort=True)
KAFKA_BATCH = 500  # events produced before waiting for the brokers' acknowledgements


async def run_import(
    settings: Settings,
    target: Target,
    refs: Sequence[Ref],
    ledger: Ledger,
    *,
    tenant: str | None = None,
    kind: str | None = None,
    dry_run: bool = False,
    limit: int | None = None,
    progress: bool | None = None,
    hub: DataDirHub | None = None,
    err: TextIO | None = None,
) -> IngestStats:
    """Import ``refs`` to ``target`` (a DryRunTarget lists them instead: nothing is written).
    ``hub``: the embedded hub the target folds into (its outbox is published and its stored
    but unfolded events are folded first)."""
    err = err or sys.stderr
    stop = asyncio.Event()
    sent = Sent(ledger, target.name, record=not dry_run)
    sources = open_sources(refs, tenant or settings.default_tenant, kind, settings, sent=sent)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _interrupt, stop)
    shown = err.isatty() if progress is None else progress
    try:
        if not dry_run:
            await target.start()
            if hub is not None:
                await hub.publish_pending()
                await hub.recover()
        with progress_bars(err, shown=shown) as bars:
            driver = IngestDriver(
                target,
                deadletter=None if dry_run else DeadLetter(settings.deadletter_path),
                reported=None if dry_run else ledger,
                busy=IMPORT_BUSY,
                stop=stop,
                progress=bars,
                max_tenants=settings.max_concurrent_tenants,
                queue_size=settings.tenant_queue_size,
                batch_size=KAFKA_BATCH if hub is None else settings.fold_batch_size,
                limit=limit,
                dry_run=err if dry_run else None,
                notices=err,
            )
            return await driver.run(sources, one_at_a_time=True)
    finally:
        try:
            if not dry_run:
                await target.close()
                if hub is not None:
                    await hub.close_outputs()  # drained, the rest kept for the next process
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)


def _interrupt(stop: asyncio.Event) -> None:
    log.info("ingest_interrupted")
    stop.set()


def delete_checkpoint(settings: Settings, target: str, refs: Sequence[Ref]) -> None:
    """Forget what the ledger holds of these sources for this target (``--restart``)."""
    from stream_app.ingest.sources import ref_key

    ledger = Ledger(settings.ingest_db_path)
    try:
        ledger.forget(target, [ref_key(r) for r in refs])
    finally:
        ledger.close()
