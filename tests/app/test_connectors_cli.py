"""`foldmem run` over every source kind, `foldmem ingest` (dry run, checkpoint, resume) and
the embedded webhook output against a real loopback HTTP server that fails at first."""

from __future__ import annotations

import asyncio
import io
import shutil
import sqlite3
import zipfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from connectors.base import BadItem
from connectors.detect import open_source
from connectors.sinks import verify_signature
from schemas.events import RawEvent
from stream_app.embedded.runner import Runner, RunOptions
from stream_app.embedded.store import Store
from stream_app.factory import build_hub, close_outputs
from stream_app.ingest.ledger import Ledger
from stream_app.outbox.sinks import default_sinks
from tests.app.conftest import SAMPLE, app_settings, invoke
from tests.webhook_receiver import WebhookReceiver, receiving

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"


@pytest.fixture
def mixed(tmp_path: Path) -> list[Path]:
    """A Google and a truncated calendar, a Gmail and a malformed mbox, a zipped Slack export."""
    slack = tmp_path / "slack-export.zip"
    with zipfile.ZipFile(slack, "w") as archive:
        for path in sorted((FIX / "chat" / "slack-export").rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(FIX / "chat" / "slack-export"))
    return [
        FIX / "calendar" / "google.ics",
        FIX / "calendar" / "truncated.ics",
        FIX / "email" / "gmail.mbox",
        FIX / "email" / "malformed.mbox",
        slack,
    ]


def expected(paths: list[Path], tenant: str) -> tuple[set[str], list[str]]:
    good: set[str] = set()
    bad: list[str] = []
    for path in paths:
        for item in open_source(path, tenant).read():
            if isinstance(item, BadItem):
                bad.append(item.location)
            else:
                good.add(item.id)
    return good, bad


def folded_ids(data_dir: Path, tenant: str) -> list[str]:
    with Store(data_dir / "foldmem.db", readonly=True) as store:
        memory, _ = store.load_tenant(tenant, 256, vectors=False)
    return [e for e, s in memory.event_states.items() if s == "folded"]


def dead_letters(data_dir: Path) -> list[dict[str, str]]:
    path = data_dir / "deadletter.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def test_run_once_folds_every_kind_once(data_dir: Path, mixed: list[Path]) -> None:
    good, bad = expected(mixed, "alice")
    assert len(good) > 10 and len(bad) >= 3
    code, _, err = invoke("run", "--once", "--no-api", "--tenant", "alice", *map(str, mixed))
    assert code == 0, err
    assert sorted(folded_ids(data_dir, "alice")) == sorted(good)
    dead = dead_letters(data_dir)
    assert sorted(d["location"] for d in dead) == sorted(bad)
    assert all(d["reason"] for d in dead)
    assert any(d["location"].startswith("truncated.ics:line") for d in dead)
    assert any(d["location"].startswith("slack-export.zip:") for d in dead)
    assert f"folded {len(good)}," in err

    code, _, err = invoke("run", "--once", "--no-api", "--tenant", "alice", *map(str, mixed))
    assert code == 0
    assert "folded 0," in err and f"duplicates {len(good)}" in err
    assert sorted(folded_ids(data_dir, "alice")) == sorted(good)
    assert len(dead_letters(data_dir)) == len(bad)  # not reported twice


def test_run_reads_chat_jsonl_and_folders(data_dir: Path) -> None:
    sources = [FIX / "chat" / "chat.jsonl", FIX / "chat" / "slack-export", FIX / "email" / "apple"]
    good, _ = expected(sources, "carol")
    code, _, err = invoke("run", "--once", "--no-api", "--tenant", "carol", *map(str, sources))
    assert code == 0, err
    assert sorted(folded_ids(data_dir, "carol")) == sorted(good)


def test_unknown_source_is_one_line_error(data_dir: Path, tmp_path: Path) -> None:
    odd = tmp_path / "notes.bin"
    odd.write_bytes(b"\x00\x01binary")
    code, _, err = invoke("run", "--once", "--no-api", str(odd))
    assert code == 2 and "cannot tell the source type" in err and "Traceback" not in err


def test_ingest_dry_run_sends_nothing(data_dir: Path, mixed: list[Path]) -> None:
    good, bad = expected(mixed, "alice")
    code, out, err = invoke("ingest", "--dry-run", "--tenant", "alice", *map(str, mixed))
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(good)
    assert {line.split("\t")[3] for line in lines} == good
    assert all(line.startswith("alice\t") for line in lines)
    assert err.count("bad ") >= len(bad)
    assert not data_dir.exists()  # nothing written, not even a checkpoint
    code, out, _ = invoke("ingest", "--dry-run", "--json", str(FIX / "calendar" / "apple.ics"))
    assert all(orjson.loads(line)["source"] == "calendar" for line in out.splitlines())


def test_interrupted_ingest_resumes_without_resending(data_dir: Path, mixed: list[Path]) -> None:
    good, bad = expected(mixed, "dave")
    args = ["ingest", "--to", "embedded", "--tenant", "dave", *map(str, mixed)]
    code, _, err = invoke(*args, "--limit", "7")  # stops inside gmail.mbox
    assert code == 0, err
    assert "sent 7," in err and "run the same command again to resume" in err
    assert len(folded_ids(data_dir, "dave")) == 7

    code, _, err = invoke(*args)
    assert code == 0, err
    assert f"sent {len(good) - 7}," in err and "duplicates 0" in err
    assert "already sent 2" in err, err
    assert sorted(folded_ids(data_dir, "dave")) == sorted(good)
    assert sorted(d["location"] for d in dead_letters(data_dir)) == sorted(bad)

    code, _, err = invoke(*args)
    assert "sent 0," in err and f"unchanged sources skipped {len(mixed)}" in err
    # a changed file is read again; only its new items are sent
    grown = data_dir.parent / "grown.mbox"
    shutil.copy(mixed[2], grown)
    code, _, err = invoke("ingest", "--tenant", "dave", str(grown))
    assert "sent 0," in err and "already sent" in err
    assert sorted(folded_ids(data_dir, "dave")) == sorted(good)


def test_an_edited_item_is_ingested_again_and_folds_as_a_revision(
    data_dir: Path, tmp_path: Path
) -> None:
    def note(event_id: str, body: str) -> dict[str, str]:
        return {"id": event_id, "source": "note", "ts": "2026-11-02T09:00:00+00:00",
                "title": "Standup", "body": body}  # fmt: skip

    notes = tmp_path / "notes.jsonl"
    notes.write_bytes(b"\n".join(orjson.dumps(n) for n in (note("n1", "at 9"), note("n2", "x"))))
    args = ["ingest", "--to", "embedded", "--tenant", "erin", str(notes)]
    code, _, err = invoke(*args)
    assert code == 0 and "sent 2," in err, err

    notes.write_bytes(b"\n".join(orjson.dumps(n) for n in (note("n1", "at 10"), note("n2", "x"))))
    code, _, err = invoke(*args)
    assert code == 0 and "sent 1," in err and "already sent 1" in err, err
    folded = folded_ids(data_dir, "erin")
    assert len(folded) == 3 and any(e.startswith("n1#rev-") for e in folded)


def test_a_ledger_written_before_fingerprints_keeps_its_rows_and_tracks_the_latest_content(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ingest.db"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE sent (target TEXT NOT NULL, tenant TEXT NOT NULL, event_id TEXT NOT "
            "NULL, source TEXT NOT NULL, status TEXT NOT NULL, at TEXT NOT NULL, "
            "PRIMARY KEY (target, tenant, event_id))"
        )
        db.execute("INSERT INTO sent VALUES ('embedded', 'erin', 'n1', 'f', 'folded', 'now')")
    event = RawEvent(
        id="n1", tenant="erin", source="note", ts="2026-11-02T09:00:00+00:00", title="Standup"
    )
    moved = event.model_copy(update={"title": "Moved"})
    ledger = Ledger(path)
    try:
        assert ledger.was_sent("embedded", event) and ledger.was_sent("embedded", moved)
        assert not ledger.was_sent("embedded", event.model_copy(update={"id": "n2"}))
        ledger.mark_sent("embedded", "f", [(moved, "ok")])
        assert ledger.was_sent("embedded", moved) and not ledger.was_sent("embedded", event)
        ledger.mark_sent("embedded", "f", [(event, "ok")])  # moved back: sent again
        assert ledger.was_sent("embedded", event) and not ledger.was_sent("embedded", moved)
        assert ledger.sent_count("embedded") == 1
    finally:
        ledger.close()


# ------------------------------------------------------------------ webhook output
@pytest.fixture
def receiver() -> Iterator[tuple[str, WebhookReceiver]]:
    state = WebhookReceiver(fail_first=2)
    with receiving(state) as url:
        yield url, state


def run_with_webhook(data_dir: Path, url: str) -> None:
    settings = app_settings(
        data_dir, webhook_url=url, webhook_secret="whsec", webhook_backoff_s=0.05
    )
    hub = build_hub(settings, sinks=default_sinks(settings, io.StringIO()))
    try:
        options = RunOptions([SAMPLE], once=True, serve_api=False, progress=False)
        asyncio.run(Runner(settings, hub, options, out=io.StringIO()).run())
    finally:
        close_outputs(hub)
        hub.store.close()


def test_embedded_webhook_delivers_each_intent_once(
    data_dir: Path, receiver: tuple[str, WebhookReceiver]
) -> None:
    url, state = receiver
    run_with_webhook(data_dir, url)
    emitted = [orjson.loads(x) for x in (data_dir / "intents.jsonl").read_bytes().splitlines()]
    assert emitted, "the sample stream emits intents"
    ids = [m for m, _, _ in state.delivered]
    assert sorted(ids) == sorted(e["message_id"] for e in emitted)
    assert len(ids) == len(set(ids))
    assert state.requests == len(ids) + 2  # the two failures were retried
    for _, body, signature in state.delivered:
        assert verify_signature(body, signature, "whsec")

    run_with_webhook(data_dir, url)  # nothing new: nothing re-delivered
    assert len(state.delivered) == len(ids)
