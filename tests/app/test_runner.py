"""The embedded runner: --once, resume from offsets, tail -f, dead letters, tenants."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import orjson

from stream_app.embedded.runner import Runner, RunOptions
from stream_app.embedded.store import Store
from stream_app.ingest.tail import OffsetTracker
from tests.app.conftest import BAD, app_settings, make_stream, quiet_hub, run_once, write_jsonl


def folded_count(db: Path, tenant: str = "alice") -> int:
    with Store(db, readonly=True) as store:
        return (
            int(store.counts(tenant)["events"].get("folded", 0)) if tenant in store.tenants() else 0
        )


async def test_once_then_restart_reads_nothing_new(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(15))
    first = await run_once(settings, stream)
    assert (first.read, first.folded) == (15, 15)
    second = await run_once(settings, stream)
    assert (second.read, second.folded) == (0, 0)  # resumed at the stored offset
    write_jsonl(stream, make_stream(5, start=15), mode="ab")
    third = await run_once(settings, stream)
    assert (third.read, third.folded) == (5, 5)
    assert folded_count(settings.db_path) == 20


async def test_rereading_a_file_is_harmless(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    events = make_stream(8)
    await run_once(settings, write_jsonl(tmp_path / "a.jsonl", events))
    stats = await run_once(settings, write_jsonl(tmp_path / "b.jsonl", events))
    assert (stats.read, stats.folded, stats.duplicates) == (8, 0, 8)


async def test_dead_letter_names_field_and_location(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    good = write_jsonl(tmp_path / "good.jsonl", make_stream(3))
    stats = await run_once(settings, good, BAD)
    records = [orjson.loads(line) for line in settings.deadletter_path.read_bytes().splitlines()]
    bad_lines = sum(1 for line in BAD.read_text().splitlines() if line.strip())
    assert stats.dead_lettered == len(records) > 0
    assert stats.folded + stats.dead_lettered == 3 + bad_lines
    by_reason = " | ".join(r["reason"] for r in records)
    assert "ts:" in by_reason  # the field is named
    assert all(r["location"].startswith("bad_events.jsonl:line ") for r in records)
    assert folded_count(settings.db_path) == 3 + (bad_lines - len(records))


async def test_tail_f_folds_appended_lines(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    stream = write_jsonl(tmp_path / "live.jsonl", make_stream(3))
    hub, _ = quiet_hub(settings)
    runner = Runner(
        settings, hub, RunOptions([stream], serve_api=False, progress=False), out=io.StringIO()
    )
    task = asyncio.create_task(runner.run())

    async def wait_for(n: int) -> None:
        for _ in range(600):
            if runner.stats.folded >= n:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"only {runner.stats.folded} of {n} folded")

    await wait_for(3)
    write_jsonl(stream, make_stream(4, start=3), mode="ab")
    with stream.open("ab") as fh:  # a partial line is left alone until it is complete
        fh.write(orjson.dumps(make_stream(1, start=7)[0])[:20])
    await wait_for(7)
    await asyncio.sleep(0.3)
    assert runner.stats.folded == 7
    with stream.open("ab") as fh:
        fh.write(orjson.dumps(make_stream(1, start=7)[0])[20:] + b"\n")
    await wait_for(8)
    runner.stop.set()
    stats = await asyncio.wait_for(task, 30)
    hub.store.close()
    assert stats.folded == 8 and stats.dead_lettered == 0
    assert folded_count(settings.db_path) == 8
    again = await run_once(settings, stream)
    assert again.read == 0


async def test_tenants_fold_in_their_own_order(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d", max_concurrent_tenants=2)
    mixed = []
    for a, b in zip(make_stream(6, "alice"), make_stream(6, "bob"), strict=True):
        mixed += [a, b]
    for event in mixed[::4]:
        del event["tenant"]  # falls back to --tenant
    stream = write_jsonl(tmp_path / "mixed.jsonl", mixed)
    stats = await run_once(settings, stream, tenant="carol")
    assert stats.folded == 12
    with Store(settings.db_path, readonly=True) as store:
        assert store.tenants() == ["alice", "bob", "carol"]


def test_offset_tracker_only_advances_over_finished_prefix() -> None:
    tracker = OffsetTracker("k", None, 0)
    a, b, c = tracker.add(10), tracker.add(20), tracker.add(30)
    assert tracker.safe_if_done(b) == 0
    tracker.done(b)
    assert tracker.safe == 0
    assert tracker.safe_if_done(a) == 20
    tracker.done(a)
    assert tracker.safe == 20
    tracker.done(c)
    assert tracker.safe == 30
