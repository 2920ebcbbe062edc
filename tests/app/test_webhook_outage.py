"""Intent delivery to a webhook through an outage: a real loopback receiver answering 500 for
a while. Every intent reaches it exactly once per message id, across a restart of the sender;
only a message still failing after the retry horizon is dead-lettered, and
`foldmem notify --replay-dead-letters` delivers those later."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from connectors.sinks import verify_signature
from tests.app.conftest import SAMPLE, invoke, write_jsonl
from tests.webhook_receiver import WebhookReceiver, receiving

SECRET = "whsec-outage"


@pytest.fixture
def webhook(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, WebhookReceiver]]:
    receiver = WebhookReceiver(fail_status=500)
    with receiving(receiver) as url:
        monkeypatch.setenv("FOLDMEM_WEBHOOK_URL", url)
        monkeypatch.setenv("FOLDMEM_WEBHOOK_SECRET", SECRET)
        monkeypatch.setenv("FOLDMEM_WEBHOOK_BACKOFF_S", "0.01")
        monkeypatch.setenv("FOLDMEM_WEBHOOK_MAX_BACKOFF_S", "0.05")
        monkeypatch.setenv("FOLDMEM_WEBHOOK_DRAIN_S", "20")
        yield url, receiver


def emitted(data_dir: Path) -> list[str]:
    lines = (data_dir / "intents.jsonl").read_bytes().splitlines()
    return [orjson.loads(line)["message_id"] for line in lines]


def dead_letters(data_dir: Path) -> list[dict[str, str]]:
    path = data_dir / "webhook-deadletter.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def test_twelve_failures_in_a_row_lose_no_intent(
    data_dir: Path, webhook: tuple[str, WebhookReceiver]
) -> None:
    _, receiver = webhook
    receiver.fail_first = 12
    code, _, err = invoke("run", "--once", str(SAMPLE))
    assert code == 0, err
    ids = emitted(data_dir)
    assert len(ids) >= 3, "the sample stream emits intents"
    assert sorted(receiver.ids()) == sorted(ids)  # each once
    assert receiver.requests == len(ids) + 12
    assert dead_letters(data_dir) == []
    for _, body, signature in receiver.delivered:
        assert verify_signature(body, signature, SECRET)


def test_an_outage_longer_than_the_run_is_delivered_after_a_restart(
    data_dir: Path, webhook: tuple[str, WebhookReceiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, receiver = webhook
    receiver.fail_first = 10**9  # down for the whole first run
    monkeypatch.setenv("FOLDMEM_WEBHOOK_DRAIN_S", "0.5")
    code, _, err = invoke("run", "--once", str(SAMPLE))
    assert code == 0, err
    ids = emitted(data_dir)
    assert receiver.ids() == [] and receiver.requests >= 1
    assert dead_letters(data_dir) == []  # well inside the horizon: kept, not dropped

    receiver.recover()
    monkeypatch.setenv("FOLDMEM_WEBHOOK_DRAIN_S", "20")
    empty = write_jsonl(data_dir.parent / "nothing.jsonl", [])
    code, _, err = invoke("run", "--once", str(empty))  # the sender restarts, nothing new
    assert code == 0, err
    assert sorted(receiver.ids()) == sorted(ids)  # each exactly once
    code, _, err = invoke("run", "--once", str(empty))
    assert sorted(receiver.ids()) == sorted(ids)  # and not again


def test_past_the_horizon_a_message_is_dead_lettered_then_replayed(
    data_dir: Path,
    webhook: tuple[str, WebhookReceiver],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    url, receiver = webhook
    receiver.fail_first = 10**9
    monkeypatch.setenv("FOLDMEM_WEBHOOK_RETRY_HOURS", str(1 / 3600))  # one second
    monkeypatch.setenv("FOLDMEM_WEBHOOK_DRAIN_S", "3")
    code, _, err = invoke("run", "--once", str(SAMPLE))
    assert code == 0, err
    ids = emitted(data_dir)
    dead = dead_letters(data_dir)
    assert sorted(d["message_id"] for d in dead) == sorted(ids)
    assert all(d["reason"] == "HTTP 500" and d["url"] == url for d in dead)
    assert receiver.ids() == []

    receiver.recover()
    started = time.monotonic()
    code, _, err = invoke("notify", "--replay-dead-letters", "--webhook", url)
    assert code == 0, err
    assert time.monotonic() - started < 30
    assert f"replayed {len(ids)} dead-lettered message(s)" in err
    assert f"delivered {len(ids)}" in err
    assert sorted(receiver.ids()) == sorted(ids)
    assert dead_letters(data_dir) == []
    code, _, err = invoke("notify", "--replay-dead-letters", "--webhook", url)
    assert code == 0 and "replayed 0 dead-lettered message(s)" in err
    assert sorted(receiver.ids()) == sorted(ids)  # nothing twice
