"""The ingest checkpoint records only what was folded: a source with an event that failed is
read again by the next run (not skipped as "unchanged")."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schemas.errors import StoreError
from schemas.events import RawEvent
from stream_app.embedded.store import Store
from stream_app.factory import build_hub
from stream_app.hub import CheckpointFn
from stream_app.ingest.imports import run_import
from stream_app.ingest.ledger import Ledger
from stream_app.ingest.targets import HubTarget
from tests.app.conftest import app_settings, make_stream, write_jsonl


class FailingOnce:
    """A hub whose store fails the first time one event is written (a full disk, say)."""

    def __init__(self, hub: Any, event_id: str) -> None:
        self.hub = hub
        self.event_id = event_id
        self.failed = False

    async def fold_batch(
        self,
        events: list[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Any]:
        outcomes: list[Any] = []
        for event in events:
            if event.id == self.event_id and not self.failed:
                self.failed = True
                outcomes.append(StoreError("writing to foldmem.db failed: disk is full"))
            else:
                outcomes.extend(await self.hub.fold_batch([event], checkpoints))
        return outcomes

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hub, name)


async def ingest(data_dir: Path, source: Path, failing: str | None = None) -> str:
    settings = app_settings(data_dir)
    hub = build_hub(settings, sinks=[])
    ledger = Ledger(settings.ingest_db_path)
    err = io.StringIO()
    try:
        target = HubTarget(FailingOnce(hub, failing) if failing else hub)
        stats = await run_import(settings, target, [source], ledger, progress=False, err=err)
    finally:
        ledger.close()
        hub.store.close()
    return stats.import_line() + "\n" + err.getvalue()


async def test_a_source_with_an_event_that_failed_is_read_again(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    source = write_jsonl(tmp_path / "s.jsonl", make_stream(6))
    first = await ingest(data_dir, source, failing="alice-ev-00003")
    assert "sent 6, folded 5" in first
    second = await ingest(data_dir, source)
    assert "unchanged" not in second
    assert "sent 1, folded 1" in second and "already sent 5" in second
    with Store(data_dir / "foldmem.db", readonly=True) as store:
        assert store.counts("alice")["events"] == {"folded": 6}
    third = await ingest(data_dir, source)
    assert "unchanged since its last complete import" in third
