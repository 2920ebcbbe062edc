"""Issue 12 item 11: deleted content does not survive in the local output files, and every
removed intent is retracted on the intent outputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from schemas.intents import IntentMessage, IntentStatus
from stream_app.cli.app import build_app
from tests.adversarial.conftest import SAMPLE
from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TITLES = {
    e["id"]: e["title"]
    for e in (orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip())
}


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def quoted_event(data_dir: Path) -> tuple[str, str]:
    """An event whose title an intent's description in intents.jsonl quotes."""
    for record in lines(data_dir / "intents.jsonl"):
        intent = record["intent"]
        for event_id in intent["evidence_event_ids"]:
            title = TITLES[event_id]
            if len(title) >= 8 and title in intent["description"]:
                return event_id, title
    raise AssertionError("no intent quotes an event")


def cli(*args: str) -> Any:
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 0, result.output
    return result


def listed_intents() -> list[dict[str, Any]]:
    """``foldmem intents --json``: one JSON object per line."""
    output = cli("intents", "--tenant", "alice", "--json").stdout
    return [orjson.loads(line) for line in output.splitlines() if line.strip()]


def intent_ids(data_dir: Path) -> set[str]:
    return {i["id"] for i in listed_intents()}


def assert_no_trace_of(data_dir: Path, event_id: str, title: str) -> None:
    for record in lines(data_dir / "intents.jsonl"):
        assert event_id not in record["intent"]["evidence_event_ids"]
        assert title not in record["intent"]["description"]
    assert not any(
        title in i["description"] for i in listed_intents()
    )  # the graph lost the quote too


def test_forget_event_rewrites_the_intent_log(sample_dir: Path) -> None:
    event_id, title = quoted_event(sample_dir)
    before = len(lines(sample_dir / "intents.jsonl"))
    cli("forget-event", "--tenant", "alice", event_id)
    assert_no_trace_of(sample_dir, event_id, title)
    assert len(lines(sample_dir / "intents.jsonl")) >= before - 1


def seed_deadletter(data_dir: Path) -> None:
    records = [
        {"kind": "fold_failed", "source": "ingest", "location": "event note-0001",
         "reason": "store conflict"},
        {"kind": "invalid", "source": "x.jsonl", "location": "x.jsonl:line 3", "reason": "ts",
         "tenant": "alice"},
        {"kind": "invalid", "source": "y.jsonl", "location": "y.jsonl:line 9", "reason": "ts",
         "tenant": "bob"},
    ]  # fmt: skip
    with (data_dir / "deadletter.jsonl").open("ab") as fh:
        for record in records:
            fh.write(orjson.dumps(record) + b"\n")


def test_forget_tenant_empties_the_logs_and_retracts_every_intent(sample_dir: Path) -> None:
    seed_deadletter(sample_dir)
    existing = intent_ids(sample_dir)
    assert len(existing) >= 4  # one per goal theme the hashing embedder tells apart, at least
    printed = cli("forget-tenant", "--tenant", "alice", "--yes").output
    records = lines(sample_dir / "intents.jsonl")
    assert all(r["type"] == "intent.retracted" for r in records if r["tenant"] == "alice")
    retracted = {r["intent"]["id"] for r in records if r["type"] == "intent.retracted"}
    assert retracted == existing
    for record in records:
        assert record["intent"]["title"] == "" and record["intent"]["description"] == ""
        assert record["reason"] == "tenant_forgotten"
        assert record["message_id"] == f"{record['intent']['id']}:retracted"
    assert printed.count("intent retracted") == len(existing)
    left = lines(sample_dir / "deadletter.jsonl")
    assert [r.get("tenant") for r in left] == ["bob"]


def test_forget_event_drops_its_deadletter_records(sample_dir: Path) -> None:
    seed_deadletter(sample_dir)
    cli("forget-event", "--tenant", "alice", "note-0001")
    left = lines(sample_dir / "deadletter.jsonl")
    assert not any("note-0001" in orjson.dumps(r).decode() for r in left)
    assert len(left) == 2


@pytest.fixture
def api(sample_dir: Path) -> Iterator[tuple[httpx.Client, LiveApi]]:
    with LiveApi(app_settings(sample_dir)) as live, httpx.Client(base_url=live.url) as client:
        yield client, live


def test_api_deletions_scrub_the_log_and_publish_retractions(
    sample_dir: Path, api: tuple[httpx.Client, LiveApi]
) -> None:
    client, live = api
    event_id, title = quoted_event(sample_dir)
    assert client.delete(f"/tenants/alice/events/{event_id}").status_code == 200
    assert_no_trace_of(sample_dir, event_id, title)
    assert client.delete("/tenants/alice", params={"confirm": "true"}).status_code == 200
    records = lines(sample_dir / "intents.jsonl")
    assert records and all(r["type"] == "intent.retracted" for r in records)
    assert "intent retracted (tenant_forgotten)" in live.printed.getvalue()


def test_the_retraction_message_carries_no_content() -> None:
    from datetime import UTC, datetime

    at = datetime(2026, 12, 1, tzinfo=UTC)
    message = IntentMessage.retraction("alice", "i_1", IntentStatus.PENDING, "event_forgotten", at)
    assert message.message_id == "i_1:retracted"
    wire = orjson.loads(message.model_dump_json())
    assert wire["type"] == "intent.retracted" and wire["reason"] == "event_forgotten"
    assert wire["intent"]["title"] == "" and wire["intent"]["evidence_event_ids"] == []
    assert IntentMessage.model_validate_json(message.model_dump_json()) == message


def test_the_webhook_receives_a_retraction_per_removed_intent(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.webhook_receiver import WebhookReceiver, receiving

    existing = intent_ids(sample_dir)
    receiver = WebhookReceiver()
    with receiving(receiver) as url:
        monkeypatch.setenv("FOLDMEM_WEBHOOK_URL", url)
        monkeypatch.setenv("FOLDMEM_WEBHOOK_SECRET", "whsec-test")
        cli("forget-tenant", "--tenant", "alice", "--yes")
    retracted = {m.removesuffix(":retracted") for m in receiver.ids() if m.endswith(":retracted")}
    assert retracted == existing
    for _, body, signature in receiver.delivered:
        message = orjson.loads(body)
        assert signature and message["type"] == "intent.retracted"
        assert message["intent"]["title"] == "" and message["intent"]["description"] == ""


def test_a_deletion_takes_back_what_a_failing_webhook_has_not_received(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.webhook_receiver import WebhookReceiver, receiving

    receiver = WebhookReceiver(fail_first=10**9)
    pending = next(i for i in listed_intents() if i["status"] == "pending")
    with receiving(receiver) as url:
        monkeypatch.setenv("FOLDMEM_WEBHOOK_URL", url)
        monkeypatch.setenv("FOLDMEM_WEBHOOK_SECRET", "whsec-test")
        monkeypatch.setenv("FOLDMEM_WEBHOOK_BACKOFF_S", "0.01")
        monkeypatch.setenv("FOLDMEM_WEBHOOK_DRAIN_S", "0.3")
        cli("intent", "resolve", "alice", pending["id"])  # the webhook is down: it waits
        assert receiver.ids() == [] and receiver.requests >= 1
        receiver.recover()
        cli("forget-tenant", "--tenant", "alice", "--yes")
    delivered = receiver.ids()
    assert f"{pending['id']}:retracted" in delivered
    assert all(m.endswith(":retracted") for m in delivered)  # never the resolved message
    for _, body, _ in receiver.delivered:
        assert pending["title"] not in body.decode()
