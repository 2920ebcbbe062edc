"""The Kafka-facing commands against the real broker (tansu): `foldmem ingest --to kafka`,
`foldmem notify`, `foldmem produce` and `foldmem tail-intents`.

The commands run as in tests/app/test_cli.py, in-process through the Typer app, with FOLDMEM_*
environment variables pointing at the test broker; `foldmem notify` also runs as a real process
stopped with SIGTERM, and the round trip goes through a real worker process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from kafka_helpers import ROOT, SAMPLE, Cluster, consume_all, free_port, produce, wait_for

from connectors.base import BadItem
from connectors.detect import open_source
from connectors.sinks import verify_signature
from connectors.sinks.kafka_sink import KafkaSink
from schemas.events import RawEvent
from schemas.intents import Intent, IntentMessage, IntentStatus
from stream_app.ingest.imports import run_import
from stream_app.ingest.ledger import Ledger
from stream_app.ingest.targets import DeliveryError
from stream_app.kafka.ingest import KafkaTarget
from stream_app.kafka.topics import partition_for
from stream_app.settings import load_settings
from tests.app.conftest import invoke
from tests.webhook_receiver import WebhookReceiver, receiving

pytestmark = pytest.mark.integration

FIX = ROOT / "tests" / "fixtures" / "connectors"
SECRET = "whsec-test"


# ----------------------------------------------------------------------------- helpers
@pytest.fixture
def env(cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """FOLDMEM_* settings of the cluster (its own topic names) on a fresh CLI data dir."""
    for name in list(os.environ):
        if name.startswith("FOLDMEM_"):
            monkeypatch.delenv(name)
    values = {k: v for k, v in cluster.env(free_port()).items() if k.startswith("FOLDMEM_")}
    values.update(
        FOLDMEM_DATA_DIR=str(tmp_path / "cli"),
        FOLDMEM_LOG_LEVEL="warning",
        FOLDMEM_KAFKA_SESSION_TIMEOUT="2",  # a consumer group forms in a second on tansu
    )
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def records_of(broker: str, topic: str) -> list[Any]:
    return asyncio.run(consume_all(broker, topic))


def topics(broker: str) -> set[str]:
    from aiokafka.admin import AIOKafkaAdminClient

    async def listed() -> set[str]:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker)
        await admin.start()
        try:
            return set(await admin.list_topics())
        finally:
            await admin.close()

    return asyncio.run(listed())


def read_sources(
    paths: list[Path], tenant: str
) -> tuple[dict[tuple[str, str], RawEvent], list[BadItem]]:
    """What the connectors make of `paths`: good events by (tenant, id), bad items."""
    good: dict[tuple[str, str], RawEvent] = {}
    bad: list[BadItem] = []
    for path in paths:
        for item in open_source(path, tenant).read():
            if isinstance(item, BadItem):
                bad.append(item)
            else:
                good.setdefault((item.tenant, item.id), item)
    return good, bad


def dead_letters(data_dir: Path, name: str = "deadletter.jsonl") -> list[dict[str, Any]]:
    path = data_dir / name
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def zipped_slack_export(tmp_path: Path) -> Path:
    export = FIX / "chat" / "slack-export"
    path = tmp_path / "slack-export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for item in sorted(export.rglob("*")):
            if item.is_file():
                archive.write(item, item.relative_to(export))
    return path


def notes_jsonl(tmp_path: Path) -> Path:
    """RawEvent JSONL: two tenants, one line without a tenant, the same event twice, a bad line."""
    lines = [
        {"id": "n-1", "tenant": "bob", "source": "note", "ts": "2026-11-02T09:00:00+00:00",
         "title": "Call the plumber"},
        {"id": "n-2", "source": "note", "ts": "2026-11-02T10:00:00+00:00",
         "title": "Book the dentist"},
        {"id": "n-3", "tenant": "carol", "source": "note", "ts": "2026-11-02T11:00:00",
         "title": "naive time"},
        {"id": "n-1", "tenant": "bob", "source": "note", "ts": "2026-11-02T09:00:00+00:00",
         "title": "Call the plumber"},
        {"id": "n-4", "tenant": "carol", "source": "note", "ts": "2026-11-03T08:00:00+01:00",
         "title": "Renew the passport", "participants": ["Erik"]},
    ]  # fmt: skip
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


# ------------------------------------------------------------------- foldmem ingest --to kafka
def test_ingest_to_kafka_sends_each_good_item_once_keyed_by_tenant(
    cluster: Cluster, env: dict[str, str], tmp_path: Path
) -> None:
    data_dir = Path(env["FOLDMEM_DATA_DIR"])
    sources = [
        FIX / "calendar" / "google.ics",
        FIX / "calendar" / "truncated.ics",
        FIX / "email" / "gmail.mbox",
        FIX / "email" / "malformed.mbox",
        zipped_slack_export(tmp_path),
        notes_jsonl(tmp_path),
    ]
    good, bad = read_sources(sources, "alice")
    assert {t for t, _ in good} == {"alice", "bob", "carol"}
    assert len(good) > 15 and len(bad) >= 5
    args = ["ingest", "--to", "kafka", "--tenant", "alice", *map(str, sources)]

    # a dry run lists every good event and reports the bad ones, but sends and writes nothing
    code, out, err = invoke(*args, "--dry-run")
    assert code == 0, err
    listed = [line.split("\t") for line in out.splitlines()]
    assert sorted((cols[0], cols[3]) for cols in listed) == sorted(good)
    for item in bad:
        assert f"bad {item.location}: {item.reason}" in err
    assert f"would send {len(good)}," in err
    assert cluster.events not in topics(cluster.broker)
    assert not data_dir.exists()

    # interrupted after 7 events (like Ctrl-C): the brokers hold exactly those 7
    code, _, err = invoke(*args, "--limit", "7")
    assert code == 0, err
    assert "sent 7," in err and "run the same command again to resume" in err
    assert len(records_of(cluster.broker, cluster.events)) == 7

    # resumed: the rest is sent, nothing twice
    code, _, err = invoke(*args)
    assert code == 0, err
    assert f"sent {len(good) - 7}," in err

    records = records_of(cluster.broker, cluster.events)
    arrived = Counter((r.key.decode(), RawEvent.model_validate_json(r.value).id) for r in records)
    assert sorted(arrived) == sorted(good)
    assert set(arrived.values()) == {1}, [k for k, n in arrived.items() if n > 1]
    for record in records:
        event = RawEvent.model_validate_json(record.value)
        assert record.key == event.tenant.encode()
        assert record.partition == partition_for(event.tenant, cluster.partitions)
        assert event == good[(event.tenant, event.id)]

    # every bad item is in the dead-letter file once, with its location and reason
    reported = [(d["location"], d["reason"]) for d in dead_letters(data_dir)]
    assert sorted(reported) == sorted((b.location, b.reason) for b in bad)
    assert any(loc.startswith("notes.jsonl:line 3") for loc, _ in reported)

    # run again: every source is unchanged and skipped, nothing sent
    code, _, err = invoke(*args)
    assert code == 0, err
    assert "sent 0," in err and f"unchanged sources skipped {len(sources)}" in err
    assert len(records_of(cluster.broker, cluster.events)) == len(good)
    assert len(dead_letters(data_dir)) == len(bad)

    # and a dry run now has nothing to show
    code, out, err = invoke(*args, "--dry-run")
    assert code == 0 and out == "" and "would send 0," in err


class FlakyProducer:
    """Acknowledges every event but the one with id `refuse` (a broker that refuses one event
    cannot be had from tansu in test time: aiokafka retries until its request timeout)."""

    def __init__(self, refuse: str) -> None:
        self.refuse = refuse
        self.sent: list[str] = []

    async def send(self, topic: str, *, value: bytes, key: bytes) -> asyncio.Future[None]:
        event_id = RawEvent.model_validate_json(value).id
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if event_id == self.refuse:
            future.set_exception(TimeoutError("no answer from the leader"))
        else:
            self.sent.append(event_id)
            future.set_result(None)
        return future

    async def stop(self) -> None:
        return None


def test_ingest_records_the_acknowledged_part_of_a_failed_batch(
    env: dict[str, str], tmp_path: Path
) -> None:
    settings = load_settings()
    notes = notes_jsonl(tmp_path)
    producer = FlakyProducer(refuse="n-2")

    class Target(KafkaTarget):
        async def start(self) -> None:
            self._producer = producer

    def run(target: KafkaTarget) -> None:
        ledger = Ledger(settings.ingest_db_path)
        try:
            asyncio.run(run_import(settings, target, [notes], ledger, progress=False))
        finally:
            ledger.close()

    with pytest.raises(DeliveryError, match="1 event\\(s\\) not acknowledged"):
        run(Target(settings))
    assert sorted(producer.sent) == ["n-1", "n-4"]

    producer.refuse = ""
    run(Target(settings))  # the next run sends only what was not acknowledged
    assert sorted(producer.sent) == ["n-1", "n-2", "n-4"]


# ------------------------------------------------------------------------- foldmem notify
@pytest.fixture
def webhook() -> Iterator[tuple[str, WebhookReceiver]]:
    state = WebhookReceiver(fail_first=2, refuse=frozenset({"i-poison:pending"}))
    with receiving(state, "/hooks/foldmem") as url:
        yield url, state


def intent_message(
    intent_id: str, tenant: str, status: IntentStatus = IntentStatus.PENDING
) -> IntentMessage:
    at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    created = status == IntentStatus.PENDING
    return IntentMessage(
        type="intent.created" if created else "intent.status_changed",
        tenant=tenant,
        intent=Intent(
            id=intent_id,
            tenant=tenant,
            title=f"Intent {intent_id}",
            status=status,
            created_at=at,
            updated_at=at,
        ),
        previous_status=None if created else IntentStatus.PENDING,
        emitted_at=at,
    )


def publish(broker: str, topic: str, messages: list[IntentMessage]) -> None:
    """As the worker does: key = tenant, value = IntentMessage JSON, header message_id."""

    async def send() -> None:
        sink = KafkaSink(broker, topic)
        for message in messages:
            await sink.add(message)
        await sink.close()

    asyncio.run(send())


def test_notify_delivers_each_intent_once_signed_retried_and_not_again_after_restart(
    cluster: Cluster, env: dict[str, str], webhook: tuple[str, WebhookReceiver]
) -> None:
    url, receiver = webhook
    data_dir = Path(env["FOLDMEM_DATA_DIR"])
    first = [
        intent_message("i-lease", "alice"),
        intent_message("i-dentist", "alice"),
        intent_message("i-plumber", "bob"),
        intent_message("i-lease", "alice", IntentStatus.RESOLVED),
        intent_message("i-passport", "carol"),
    ]
    poison = intent_message("i-poison", "bob")
    publish(cluster.broker, cluster.intents, [*first, poison])
    asyncio.run(produce(cluster.broker, cluster.intents, [(b"alice", b"not an intent")]))

    # a real process, stopped with SIGTERM once the webhook has everything
    command = [sys.executable, "-m", "stream_app.cli", "notify", "--webhook", url]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "FOLDMEM_WEBHOOK_SECRET": SECRET},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for(lambda: len(receiver.ids()) >= len(first), 60, "webhook deliveries")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err_bytes = proc.communicate(timeout=30)
    err = err_bytes.decode()
    assert proc.returncode == 0, err
    assert (
        f"received {len(first) + 2} intent message(s), unreadable 1; "
        f"{url}: delivered {len(first)}, duplicates skipped 0, failed 1"
    ) in err

    # each message once, signed with the secret, the message as it was published
    assert sorted(receiver.ids()) == sorted(m.message_id for m in first)
    by_id = {m.message_id: m for m in first}
    for message_id, body, signature in receiver.delivered:
        assert verify_signature(body, signature, SECRET)
        assert not verify_signature(body, signature, "another secret")
        assert IntentMessage.model_validate_json(body) == by_id[message_id]
    # the two 503s were retried; the refused message was tried once and dead-lettered
    assert receiver.requests == len(first) + 2 + 1
    [dead] = dead_letters(data_dir, "webhook-deadletter.jsonl")
    assert dead["message_id"] == poison.message_id and dead["reason"] == "HTTP 400"

    # restarted: the committed offsets say everything was handled
    code, _, err = invoke("notify", "--webhook", url, "--secret", SECRET, "--idle-exit", "1")
    assert code == 0, err
    assert "received 0 intent message(s)" in err
    assert len(receiver.delivered) == len(first)

    # the same messages published again (a worker crash replays them) and one new status:
    # only the new one reaches the webhook
    later = intent_message("i-dentist", "alice", IntentStatus.DEFERRED)
    publish(cluster.broker, cluster.intents, [*first, later])
    code, _, err = invoke("notify", "--webhook", url, "--secret", SECRET, "--idle-exit", "1")
    assert code == 0, err
    assert (
        f"received {len(first) + 1} intent message(s), unreadable 0; "
        f"{url}: delivered 1, duplicates skipped {len(first)}"
    ) in err
    assert sorted(receiver.ids()) == sorted([*by_id, later.message_id])


# ------------------------------------------------------- foldmem produce / tail-intents
def test_produce_reads_every_source_kind_and_fills_missing_tenants(
    cluster: Cluster, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLDMEM_DEFAULT_TENANT", "dana")
    sources = [
        notes_jsonl(tmp_path),
        FIX / "chat" / "chat.jsonl",
        FIX / "calendar" / "truncated.ics",
    ]
    good, bad = read_sources(sources, "dana")
    code, out, err = invoke("produce", *map(str, sources))
    assert code == 0, err
    # RawEvent lines go as they are, the repeated one included (the worker drops duplicates)
    sent = len(good) + 1
    assert out.strip() == f"sent {sent} message(s) to {cluster.events}, skipped {len(bad)} invalid"
    assert "skipped notes.jsonl:line 3: ts: Value error, ts must be timezone-aware" in err
    for item in bad:
        assert f"{item.location}: {item.reason}" in err

    records = records_of(cluster.broker, cluster.events)
    arrived = Counter((r.key.decode(), RawEvent.model_validate_json(r.value).id) for r in records)
    assert sorted(arrived) == sorted(good)
    assert arrived[("bob", "n-1")] == 2 and sum(arrived.values()) == sent
    assert {tenant for tenant, _ in arrived} == {"bob", "carol", "dana"}
    for record in records:
        event = RawEvent.model_validate_json(record.value)
        assert record.key == event.tenant.encode()
        assert record.partition == partition_for(event.tenant, cluster.partitions)
        assert event == good[(event.tenant, event.id)]


def test_produce_worker_tail_intents_round_trip(cluster: Cluster, env: dict[str, str]) -> None:
    worker = cluster.start_worker()
    code, out, err = invoke("produce", str(SAMPLE))
    assert code == 0, err
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    assert out.strip() == f"sent {len(lines)} message(s) to {cluster.events}"

    wait_for(worker.ready, 60, "worker ready", [worker])
    wait_for(
        lambda: worker.metric('foldmem_events_folded_total{status="folded"}') >= len(lines),
        120,
        "the sample folded",
        [worker],
    )
    published = records_of(cluster.broker, cluster.intents)
    assert published, "the sample stream emits intents"
    assert worker.metric("foldmem_intents_emitted_total") == len(published)

    code, out, err = invoke("tail-intents", "--from-beginning", "--idle-exit", "1", "--json")
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(r.value.decode() for r in published)

    code, out, err = invoke("tail-intents", "--from-beginning", "--idle-exit", "1")
    assert code == 0, err
    shown = out.splitlines()
    assert len(shown) == len(published)
    for record in published:
        message = IntentMessage.model_validate_json(record.value)
        assert any(
            line.startswith(f"[{message.tenant}] new intent: ") and message.intent.id in line
            for line in shown
        )

    # a tail that starts at the end sees nothing old and exits when idle
    code, out, err = invoke("tail-intents", "--idle-exit", "1")
    assert code == 0 and out == "", err


# ----------------------------------------------------------------------- broker down
@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "--to", "kafka", str(FIX / "calendar" / "google.ics")],
        ["produce", str(FIX / "jsonl" / "events.jsonl")],
        ["tail-intents", "--idle-exit", "1"],
        ["notify", "--stdout", "--idle-exit", "1"],
    ],
    ids=["ingest", "produce", "tail-intents", "notify"],
)
def test_unreachable_brokers_are_a_one_line_error(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("FOLDMEM_KAFKA_BROKERS", f"127.0.0.1:{free_port()}")
    code, _, err = invoke(*command)
    assert code == 2, err
    assert "error: Kafka brokers 127.0.0.1:" in err and "unreachable" in err
    assert "Traceback" not in err
