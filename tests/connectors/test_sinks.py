"""Intent sinks: stdout, JSONL, a webhook against a real loopback HTTP server, dedup."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import orjson
import pytest

from connectors.sinks import (
    DedupingSink,
    JsonlSink,
    StdoutSink,
    WebhookSink,
    sign,
    verify_signature,
)
from schemas.intents import Intent, IntentMessage, IntentStatus
from tests.webhook_receiver import serving

SECRET = "whsec_test_5f2a"
NOW = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def message(n: int, status: IntentStatus = IntentStatus.PENDING) -> IntentMessage:
    intent = Intent(
        id=f"intent-{n}",
        tenant="alice",
        title=f"Sign the lease #{n}",
        status=status,
        deadline=datetime(2024, 3, 8, tzinfo=UTC),
        created_at=NOW,
        updated_at=NOW,
    )
    created = status == IntentStatus.PENDING
    return IntentMessage(
        type="intent.created" if created else "intent.status_changed",
        tenant="alice",
        intent=intent,
        previous_status=None if created else IntentStatus.PENDING,
        emitted_at=NOW,
    )


class Receiver:
    """A webhook receiver: verifies signatures, dedups on the message id, follows a script."""

    def __init__(self) -> None:
        self.script: dict[str, list[str]] = defaultdict(list)  # message id -> planned outcomes
        self.accepted: dict[str, int] = defaultdict(int)
        self.attempts: dict[str, int] = defaultdict(int)
        self.bad_signatures = 0
        self.lock = threading.Lock()

    def outcome(self, message_id: str) -> str:
        with self.lock:
            self.attempts[message_id] += 1
            plan = self.script[message_id]
            return plan.pop(0) if plan else "ok"


@pytest.fixture
def receiver() -> Iterator[tuple[str, Receiver]]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if not verify_signature(body, self.headers.get("X-Foldmem-Signature", ""), SECRET):
                state.bad_signatures += 1
                self.send_response(401)
                self.end_headers()
                return
            message_id = self.headers["X-Foldmem-Message-Id"]
            assert json.loads(body)["intent"]["id"] == message_id.split(":")[0]
            outcome = state.outcome(message_id)
            if outcome == "drop":  # connection reset before anything is processed
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if outcome == "lost":  # processed, but the response never arrives
                with state.lock:
                    state.accepted[message_id] = 1
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if outcome.isdigit():
                self.send_response(int(outcome))
                if outcome == "429":
                    self.send_header("Retry-After", "0")
                self.end_headers()
                return
            with state.lock:  # dedup on the message id, as receivers are told to
                state.accepted[message_id] = 1
            self.send_response(200)
            self.end_headers()

    with serving(Handler, "/hooks/foldmem") as url:
        yield url, state


async def test_webhook_retries_until_each_intent_is_delivered_once(
    receiver, tmp_path: Path
) -> None:
    url, state = receiver
    msgs = [message(1), message(2), message(3), message(4), message(1, IntentStatus.RESOLVED)]
    state.script["intent-1:pending"] = ["503", "503"]
    state.script["intent-2:pending"] = ["drop", "429"]
    state.script["intent-3:pending"] = ["lost"]
    state.script["intent-1:resolved"] = ["502"]
    dead = tmp_path / "dead.jsonl"
    sink = WebhookSink(url, SECRET, max_attempts=4, backoff=0.01, dead_letter_path=dead)
    for m in msgs:
        await sink.add(m)
    await sink.flush()
    await sink.close()
    assert dict(state.accepted) == {m.message_id: 1 for m in msgs}
    assert state.attempts["intent-1:pending"] == 3
    assert state.attempts["intent-2:pending"] == 3
    assert state.attempts["intent-3:pending"] == 2  # retried after the lost response
    assert state.attempts["intent-4:pending"] == 1
    assert state.bad_signatures == 0
    assert sink.delivered == 5 and sink.dead_lettered == 0
    assert not dead.exists()


async def test_webhook_dead_letters_after_n_failures(receiver, tmp_path: Path) -> None:
    url, state = receiver
    state.script["intent-1:pending"] = ["500"] * 10
    state.script["intent-2:pending"] = ["400"]
    dead = tmp_path / "dlq" / "dead.jsonl"
    async with httpx.AsyncClient(timeout=5) as client:
        sink = WebhookSink(
            url, SECRET, max_attempts=3, backoff=0.01, dead_letter_path=dead, client=client
        )
        for m in (message(1), message(2), message(3)):
            await sink.add(m)
        await sink.close()
        assert not client.is_closed  # a client passed in is not ours to close
    records = [orjson.loads(x) for x in dead.read_bytes().splitlines()]
    assert [(r["message_id"], r["reason"], r["attempts"]) for r in records] == [
        ("intent-1:pending", "HTTP 500", 3),
        ("intent-2:pending", "HTTP 400", 1),  # not retryable
    ]
    assert records[0]["message"]["intent"]["title"] == "Sign the lease #1"
    assert dict(state.accepted) == {"intent-3:pending": 1}


async def test_webhook_connection_refused_goes_to_dead_letter(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    dead = tmp_path / "dead.jsonl"
    sink = WebhookSink(f"http://127.0.0.1:{port}/", SECRET, max_attempts=2, backoff=0.01,
                       dead_letter_path=dead)  # fmt: skip
    await sink.add(message(1))
    await sink.close()
    record = orjson.loads(dead.read_bytes())
    assert record["attempts"] == 2 and "ConnectError" in record["reason"]


def test_signature_helpers() -> None:
    body = orjson.dumps({"a": 1})
    header = sign(body, SECRET)
    assert header.startswith("sha256=") and len(header) == 7 + 64
    assert verify_signature(body, header, SECRET)
    assert not verify_signature(body + b" ", header, SECRET)
    assert not verify_signature(body, header, "other-secret")
    assert not verify_signature(body, header.removeprefix("sha256="), SECRET)
    assert not verify_signature(body, "", SECRET)


async def test_stdout_sink_lines_and_json() -> None:
    out = io.StringIO()
    sink = StdoutSink(stream=out)
    await sink.add(message(1))
    await sink.add(message(1, IntentStatus.RESOLVED))
    await sink.flush()
    first, second = out.getvalue().splitlines()
    assert '"Sign the lease #1"' in first and " NEW pending " in first
    assert "deadline=2024-03-08T00:00:00+00:00" in first and "id=intent-1" in first
    assert " STATUS pending->resolved " in second
    out_json = io.StringIO()
    json_sink = StdoutSink(json=True, stream=out_json)
    await json_sink.add(message(2))
    assert IntentMessage.model_validate_json(out_json.getvalue()) == message(2)


async def test_jsonl_sink_appends(tmp_path: Path) -> None:
    path = tmp_path / "out" / "intents.jsonl"
    for batch in ([message(1), message(2)], [message(3)]):
        sink = JsonlSink(path)
        for m in batch:
            await sink.add(m)
        await sink.flush()
        await sink.close()
    lines = path.read_bytes().splitlines()
    assert [IntentMessage.model_validate_json(x) for x in lines] == [
        message(1),
        message(2),
        message(3),
    ]


async def test_deduping_sink_survives_a_restart(tmp_path: Path) -> None:
    out, db = tmp_path / "intents.jsonl", tmp_path / "state" / "delivered.sqlite"
    sink = DedupingSink(JsonlSink(out), db)
    for m in (message(1), message(1), message(2), message(1, IntentStatus.RESOLVED)):
        await sink.add(m)
    await sink.close()
    assert sink.skipped == 1
    restarted = DedupingSink(JsonlSink(out), db)
    for m in (message(1), message(2), message(1, IntentStatus.RESOLVED), message(3)):
        await restarted.add(m)
    await restarted.close()
    ids = [IntentMessage.model_validate_json(x).message_id for x in out.read_bytes().splitlines()]
    assert ids == ["intent-1:pending", "intent-2:pending", "intent-1:resolved", "intent-3:pending"]


async def test_deduping_sink_does_not_record_failed_deliveries(tmp_path: Path) -> None:
    class Flaky:
        def __init__(self) -> None:
            self.calls = 0
            self.got: list[str] = []

        async def add(self, m: IntentMessage) -> None:
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("downstream down")
            self.got.append(m.message_id)

        async def flush(self) -> None: ...

        async def close(self) -> None: ...

    inner = Flaky()
    sink = DedupingSink(inner, tmp_path / "d.sqlite")
    with pytest.raises(RuntimeError):
        await sink.add(message(1))
    await sink.add(message(1))
    await sink.add(message(1))
    assert inner.got == ["intent-1:pending"]
    await sink.close()
