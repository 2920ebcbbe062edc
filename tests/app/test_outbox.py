"""The intent outbox and its deliveries: each sink fed in order from the store, a failing sink
keeping its place (durably, backoff included), each message id once where a sink asks for it,
dead letters only for a refusal or past the horizon, one process delivering a sink at a time.
Real SQLite store, real sinks, a real loopback webhook receiver."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import orjson

from connectors.sinks import JsonlSink, StdoutSink, WebhookSink
from schemas.intents import Intent, IntentMessage, IntentStatus
from stream_app.embedded.interlock import TenantLocks
from stream_app.embedded.store import Store
from stream_app.outbox.delivery import BUSY_POLL_S, Deliveries, Delivery, RetryPolicy
from stream_app.outbox.table import Outbox
from tests.webhook_receiver import WebhookReceiver, receiving

SECRET = "whsec-outbox"
FAST = RetryPolicy(first_delay_s=0.01, max_delay_s=0.02, horizon_s=3600.0)
AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def message(n: int, status: IntentStatus = IntentStatus.PENDING) -> IntentMessage:
    intent = Intent(
        id=f"i-{n}", tenant="alice", title=f"Intent {n}", status=status, created_at=AT,
        updated_at=AT,
    )  # fmt: skip
    created = status == IntentStatus.PENDING
    return IntentMessage(
        type="intent.created" if created else "intent.status_changed",
        tenant="alice",
        intent=intent,
        previous_status=None if created else IntentStatus.PENDING,
        emitted_at=AT,
    )


def dead_letters(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


async def test_a_failing_webhook_keeps_its_place_and_gets_each_message_once(
    tmp_path: Path,
) -> None:
    receiver = WebhookReceiver(fail_first=3)
    with receiving(receiver) as url, Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(WebhookSink(url, SECRET), outbox, once=True, policy=FAST)
        outbox.append([message(n) for n in range(5)])
        await Deliveries([feed], drain_s=20).close()
    assert receiver.ids() == [f"i-{n}:pending" for n in range(5)]  # in order, each once
    assert receiver.requests == 5 + 3
    assert (feed.stats.delivered, feed.stats.dead_lettered, feed.stats.pending) == (5, 0, 0)


async def test_a_refused_message_is_dead_lettered_at_once_and_the_rest_go_on(
    tmp_path: Path,
) -> None:
    receiver = WebhookReceiver(refuse=frozenset({"i-1:pending"}))
    dead = tmp_path / "webhook-deadletter.jsonl"
    with receiving(receiver) as url, Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(WebhookSink(url, SECRET), outbox, once=True, policy=FAST, dead_letters=dead)
        outbox.append([message(0), message(1), message(2)])
        await Deliveries([feed], drain_s=20).close()
    assert receiver.ids() == ["i-0:pending", "i-2:pending"]
    [record] = dead_letters(dead)
    assert (record["message_id"], record["url"], record["reason"], record["attempts"]) == (
        "i-1:pending", url, "HTTP 400", 1,
    )  # fmt: skip
    assert feed.stats.dead_lettered == 1


async def test_past_the_horizon_a_failing_message_is_dead_lettered(tmp_path: Path) -> None:
    receiver = WebhookReceiver(fail_first=10**9, fail_status=500)
    dead = tmp_path / "dead.jsonl"
    policy = RetryPolicy(first_delay_s=0.01, max_delay_s=0.02, horizon_s=0.0)
    with receiving(receiver) as url, Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(
            WebhookSink(url, SECRET), outbox, once=True, policy=policy, dead_letters=dead
        )
        outbox.append([message(0), message(1)])
        await Deliveries([feed], drain_s=20).close()
    assert [d["message_id"] for d in dead_letters(dead)] == ["i-0:pending", "i-1:pending"]
    assert receiver.requests == 2 and feed.stats.pending == 0


async def test_the_retry_state_survives_a_restart(tmp_path: Path) -> None:
    receiver = WebhookReceiver(fail_first=10**9)
    slow = RetryPolicy(first_delay_s=60.0, max_delay_s=60.0, horizon_s=3600.0)
    with receiving(receiver) as url:
        with Store(tmp_path / "s.db") as store:
            outbox = Outbox(store)
            feed = Delivery(WebhookSink(url, SECRET), outbox, once=True, policy=slow)
            outbox.append([message(0)])
            wait = await feed.deliver()
            await feed.sink.close()
        assert wait is not None and wait > 20 and receiver.requests == 1
        with Store(tmp_path / "s.db") as store:  # another process, later
            outbox = Outbox(store)
            cursor = outbox.cursor(f"webhook:{url}")
            assert cursor.attempts == 1 and cursor.next_at > datetime.now(UTC).timestamp() + 20
            again = Delivery(WebhookSink(url, SECRET), outbox, once=True, policy=slow)
            assert (await again.deliver() or 0) > 20  # still backing off: no attempt
            await again.sink.close()
    assert receiver.requests == 1


async def test_a_sink_that_takes_each_id_once_skips_repeats_across_restarts(
    tmp_path: Path,
) -> None:
    out = tmp_path / "intents.jsonl"
    deferred = message(1, IntentStatus.DEFERRED)
    with Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(JsonlSink(out), outbox, once=True)
        outbox.append([message(1), deferred, message(2), deferred])  # deferred twice
        assert await feed.deliver() is None
    with Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(JsonlSink(out), outbox, once=True)
        outbox.append([message(1), message(3)])  # a replay of the topic, and something new
        assert await feed.deliver() is None
        assert feed.stats.duplicates == 1
    ids = [IntentMessage.model_validate_json(x).message_id for x in out.read_bytes().splitlines()]
    assert ids == ["i-1:pending", "i-1:deferred", "i-2:pending", "i-3:pending"]


async def test_a_terminal_gets_every_message_and_a_new_sink_starts_at_the_end(
    tmp_path: Path,
) -> None:
    printed = io.StringIO()
    with Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        terminal = Delivery(StdoutSink(style="human", stream=printed), outbox)
        outbox.append([message(1), message(1, IntentStatus.DEFERRED)] * 2)
        await terminal.deliver()
        late = tmp_path / "late.jsonl"
        newcomer = Delivery(JsonlSink(late), outbox)  # configured after those four
        outbox.append([message(9)])
        await terminal.deliver()
        await newcomer.deliver()
        assert outbox.unpublished() == []
    assert len(printed.getvalue().splitlines()) == 5
    assert [orjson.loads(x)["intent"]["id"] for x in late.read_bytes().splitlines()] == ["i-9"]


async def test_a_local_sink_that_cannot_write_keeps_its_place_until_it_can(
    tmp_path: Path,
) -> None:
    path = tmp_path / "intents.jsonl"
    path.mkdir()  # a folder where the file should be: every write fails
    with Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(JsonlSink(path), outbox, policy=RetryPolicy(0.01, 0.01))
        outbox.append([message(1), message(2)])
        assert (await feed.deliver() or 0) > 0
        assert outbox.cursor(feed.sink.name).attempts == 1
        path.rmdir()
        await Deliveries([feed], drain_s=5).close()
    assert len(path.read_bytes().splitlines()) == 2


async def test_one_process_delivers_a_sink_at_a_time(tmp_path: Path) -> None:
    out = tmp_path / "intents.jsonl"
    locks = TenantLocks(tmp_path / "locks")
    with Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        feed = Delivery(JsonlSink(out), outbox, locks=locks)
        outbox.append([message(1)])
        with locks.try_hold(f"~outbox:{feed.sink.name}") as held:  # another process
            assert held
            assert await feed.deliver() == BUSY_POLL_S
        assert not out.exists()
        assert await feed.deliver() is None
    assert out.exists()


async def test_publish_delivers_the_inline_sinks_and_close_drains_the_others(
    tmp_path: Path,
) -> None:
    receiver = WebhookReceiver()
    printed = io.StringIO()
    with receiving(receiver) as url, Store(tmp_path / "s.db") as store:
        outbox = Outbox(store)
        terminal = StdoutSink(style="human", stream=printed)
        deliveries = Deliveries(
            [
                Delivery(terminal, outbox),
                Delivery(WebhookSink(url, SECRET), outbox, once=True, policy=FAST),
            ],
            inline=[terminal.name],
            drain_s=10,
        )
        outbox.append([message(1)])
        await deliveries.publish()
        assert "new intent" in printed.getvalue() and receiver.ids() == []
        await deliveries.close()
    assert receiver.ids() == ["i-1:pending"]
