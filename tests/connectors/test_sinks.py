"""Intent sinks: stdout, JSONL, a webhook against a real loopback HTTP server (one attempt
per add; retries and dead letters are the outbox's: tests/app/test_outbox.py)."""

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
    JsonlSink,
    Sink,
    SinkError,
    StdoutSink,
    WebhookSink,
    sign,
    verify_signature,
)
from connectors.sinks.stdout import describe
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


async def test_webhook_add_is_one_signed_attempt_and_says_what_went_wrong(receiver) -> None:
    url, state = receiver
    state.script["intent-1:pending"] = ["503"]
    state.script["intent-2:pending"] = ["429"]
    state.script["intent-3:pending"] = ["400"]
    state.script["intent-4:pending"] = ["drop"]
    sink = WebhookSink(url, SECRET)
    outcomes: dict[str, tuple[bool, float | None]] = {}
    for n in (1, 2, 3, 4):
        with pytest.raises(SinkError) as failed:
            await sink.add(message(n))
        outcomes[failed.value.reason] = (failed.value.retryable, failed.value.retry_after)
    await sink.add(message(1))  # the receiver answers 200 this time
    await sink.flush()
    await sink.close()
    assert outcomes["HTTP 503"] == (True, None)
    assert outcomes["HTTP 429"] == (True, 0.0)  # the receiver's Retry-After
    assert outcomes["HTTP 400"] == (False, None)  # refused: retrying cannot help
    [(reason, (retryable, _))] = [(r, o) for r, o in outcomes.items() if not r.startswith("HTTP")]
    assert retryable and "Error" in reason  # the connection was reset
    assert dict(state.accepted) == {"intent-1:pending": 1}
    assert state.bad_signatures == 0


async def test_a_client_passed_in_is_not_closed(receiver) -> None:
    url, _ = receiver
    async with httpx.AsyncClient(timeout=5) as client:
        sink = WebhookSink(url, SECRET, client=client)
        await sink.add(message(1))
        await sink.close()
        assert not client.is_closed


async def test_webhook_connection_refused_is_retryable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    sink = WebhookSink(f"http://127.0.0.1:{port}/", SECRET)
    with pytest.raises(SinkError, match="ConnectError") as failed:
        await sink.add(message(1))
    assert failed.value.retryable
    await sink.close()


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


async def test_an_update_says_what_the_intent_was_called_before() -> None:
    renamed = message(3).model_copy(
        update={
            "type": "intent.updated",
            "previous_status": IntentStatus.PENDING,
            "previous_title": "Locate the leak",
            "revision": 2,
        }
    )
    out = io.StringIO()
    sink = StdoutSink(stream=out)
    await sink.add(renamed)
    await sink.flush()

    assert ' UPDATED pending "Sign the lease #3" ' in out.getvalue()
    assert describe(renamed).startswith(
        "[alice] intent renamed from 'Locate the leak': 'Sign the lease #3' (general, pending)"
    )
    assert renamed.message_id == "intent-3:updated:2"


def test_an_update_of_the_deadline_alone_says_the_deadline_moved() -> None:
    moved = message(4).model_copy(
        update={
            "type": "intent.updated",
            "previous_status": IntentStatus.PENDING,
            "previous_title": "Sign the lease #4",
            "previous_deadline": datetime(2024, 3, 1, tzinfo=UTC),
            "revision": 1,
        }
    )

    assert describe(moved).startswith("[alice] intent deadline moved from 2024-03-01: ")


def test_a_title_that_changes_only_its_deadline_is_no_rename() -> None:
    moved = message(5).model_copy(
        update={
            "type": "intent.updated",
            "intent": message(5).intent.model_copy(update={"title": "Sign the lease (by 8 Mar)"}),
            "previous_status": IntentStatus.PENDING,
            "previous_title": "Sign the lease (by 1 Mar)",
            "previous_deadline": datetime(2024, 3, 1, tzinfo=UTC),
            "revision": 1,
        }
    )

    assert describe(moved).startswith("[alice] intent deadline moved from 2024-03-01: ")


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


async def test_jsonl_sink_can_carry_the_message_id_and_names_its_file(tmp_path: Path) -> None:
    path = tmp_path / "intents.jsonl"
    sink = JsonlSink(path, with_message_id=True)
    await sink.add(message(1))
    await sink.flush()
    assert orjson.loads(path.read_bytes())["message_id"] == "intent-1:pending"
    assert sink.name == f"jsonl:{path.resolve()}"
    assert JsonlSink(path, name="jsonl:intents.jsonl").name == "jsonl:intents.jsonl"


async def test_a_jsonl_sink_that_cannot_write_says_so_retryably(tmp_path: Path) -> None:
    blocked = tmp_path / "intents.jsonl"
    blocked.mkdir()  # a folder where the file should be
    with pytest.raises(SinkError) as failed:
        await JsonlSink(blocked).add(message(1))
    assert failed.value.retryable


def test_every_sink_is_a_sink(tmp_path: Path) -> None:
    for sink in (StdoutSink(), JsonlSink(tmp_path / "x.jsonl"), WebhookSink("http://x", "k")):
        assert isinstance(sink, Sink) and sink.name
