"""The ingest driver hands its target each tenant's next batch with the batch it delivers, so
the hub embeds the next batch's texts while this one folds: every event still delivered once,
in order, and the same memory with the embedding ahead on or off."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from schemas.events import RawEvent
from stream_app.factory import build_hub
from stream_app.hub import CheckpointFn
from stream_app.hub.reader import shared_reader
from stream_app.ingest.driver import IngestDriver
from stream_app.ingest.imports import run_import
from stream_app.ingest.ledger import Ledger
from stream_app.ingest.sources import Batch, Outcome
from stream_app.ingest.targets import HubTarget
from tests.app.conftest import app_settings, make_stream, write_jsonl
from topologies.naming.phrases import PhraseParser, Reading


class _NotingTarget:
    """Notes each delivery: the batch's event ids and those it was told come next."""

    name = "test"

    def __init__(self) -> None:
        self.deliveries: list[tuple[list[str], list[str]]] = []

    async def start(self) -> None:
        return None

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        self.deliveries.append(([e.id for e in events], [e.id for e in ahead]))
        await asyncio.sleep(0)
        return ["sent" for _ in events]

    async def close(self) -> None:
        return None


async def test_each_batch_is_delivered_with_the_next_one_the_queue_holds(
    make_event: Callable[..., RawEvent],
) -> None:
    events = [make_event(f"Errand number {n}") for n in range(10)]
    target = _NotingTarget()
    driver = IngestDriver(target, deadletter=None, batch_size=4)

    stats = await driver.run([Batch("request", events)])

    ids = [e.id for e in events]
    assert target.deliveries == [(ids[:4], ids[4:8]), (ids[4:8], ids[8:]), (ids[8:], [])]
    assert stats.sent == 10


async def imported(
    tmp_path: Path, embed_ahead: bool, parse_ahead: bool = False
) -> tuple[dict[str, Any], int]:
    """The tenant's graph after an import in batches of 8, and how many batches were
    embedded ahead (read ahead, with ``parse_ahead``)."""
    data_dir = tmp_path / f"data-{embed_ahead}-{parse_ahead}"
    settings = app_settings(
        data_dir, fold_batch_size=8, embed_ahead=embed_ahead, parse_ahead=parse_ahead
    )
    source = write_jsonl(tmp_path / "s.jsonl", make_stream(40))
    hub = build_hub(settings, sinks=[])
    memo = hub.engine.embedder
    started: list[str] = []
    embed_ahead_of = memo.embed_ahead
    memo.embed_ahead = lambda key, texts: (started.append(key), embed_ahead_of(key, texts))[1]  # type: ignore[method-assign]
    read: list[str] = []
    if parse_ahead:  # the shared reader process, each reading noted and waited for
        reader = hub.engine.reader or shared_reader()  # on one core the factory hands none
        hub.engine.namer.parser = PhraseParser()  # one that has read none of the stream yet

        def submit(keys: Sequence[Any], texts: Sequence[str]) -> Future[Reading]:
            future = reader.submit(keys, texts)
            future.result(timeout=120)
            read.append("batch")
            return future

        hub.engine.reader = SimpleNamespace(submit=submit)  # type: ignore[assignment]
    ledger = Ledger(settings.ingest_db_path)
    try:
        target = HubTarget(hub)
        err = io.StringIO()
        stats = await run_import(
            settings, target, [source], ledger, progress=False, err=err, hub=hub
        )
        assert stats.folded == 40
        return hub.graph("alice"), len(read) if parse_ahead else len(started)
    finally:
        ledger.close()
        hub.store.close()


async def test_an_import_embedding_ahead_folds_the_memory_it_folds_without(
    tmp_path: Path,
) -> None:
    ahead, embedded_ahead = await imported(tmp_path, embed_ahead=True)
    alone, none = await imported(tmp_path, embed_ahead=False)
    assert ahead == alone
    assert embedded_ahead == 4 and none == 0  # batches 2 to 5 while the one before folded


async def test_an_import_reading_ahead_in_a_worker_process_folds_the_memory_it_folds_without(
    tmp_path: Path,
) -> None:
    ahead, read_ahead = await imported(tmp_path, embed_ahead=False, parse_ahead=True)
    alone, _ = await imported(tmp_path, embed_ahead=False, parse_ahead=False)
    assert ahead == alone
    assert read_ahead == 4  # batches 2 to 5 parsed while the one before folded
