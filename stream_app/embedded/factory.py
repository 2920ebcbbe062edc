"""The embedded hub from Settings: store, engine, intent outputs, write locks."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence

import structlog

from connectors.sinks import Sink
from stream_app.embedded.hub import MemoryHub
from stream_app.embedded.interlock import TenantLocks
from stream_app.embedded.store import Store
from stream_app.factory import build_engine
from stream_app.ingest.admission import Admission
from stream_app.outbox.sinks import default_sinks, embedded_deliveries
from stream_app.settings import Settings
from topologies.embedding import Embedder

log = structlog.get_logger(__name__)


def build_hub(
    settings: Settings,
    *,
    sinks: Sequence[Sink] | None = None,
    embedder: Embedder | None = None,
) -> MemoryHub:
    """Store + engine + intent sinks (default: the terminal, DATA_DIR/intents.jsonl and
    FOLDMEM_WEBHOOK_URL when set): everything a runner, the API or a CLI write command needs."""
    engine = build_engine(settings, embedder)
    store = Store(settings.db_path, synchronous=settings.store_synchronous)
    try:
        outputs = embedded_deliveries(
            settings, store, default_sinks(settings) if sinks is None else sinks
        )
        return MemoryHub(
            store,
            engine,
            outputs,
            planner_name=settings.planner,
            admission=Admission.of(settings.max_future_days),
            locks=TenantLocks(settings.locks_path, settings.write_lock_timeout_s),
        )
    except BaseException:
        store.close()
        raise


def close_outputs(hub: MemoryHub) -> None:
    """Deliver what is left (a webhook: for up to FOLDMEM_WEBHOOK_DRAIN_S; the rest waits in
    the outbox for the next process), then release the sinks. Called where an event loop
    already runs (a command invoked from async code), it leaves the rest in the outbox."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(hub.outputs.close())
        return
    log.info("outputs_not_drained", reason="inside a running event loop; kept in the outbox")


@contextlib.contextmanager
def open_hub(settings: Settings) -> Iterator[MemoryHub]:
    """A hub for one CLI command; its outputs are drained and its store closed on the way
    out."""
    hub = build_hub(settings)
    try:
        yield hub
    finally:
        try:
            close_outputs(hub)  # a webhook delivers what the command emitted (retractions)
        finally:
            hub.store.close()
