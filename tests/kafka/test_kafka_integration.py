"""End to end through a real Kafka-protocol broker (tansu) and real worker processes."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from datetime import UTC, datetime

import httpx
import orjson
import pytest
from kafka_helpers import (
    BAD,
    Cluster,
    Worker,
    changelog_matches,
    consume_all,
    diff,
    interleave,
    make_streams,
    messages,
    recovered,
    reference,
    wait_for,
)

from schemas.intents import IntentMessage
from stream_app.kafka.codec import split_key
from stream_app.kafka.topics import partition_for

pytestmark = pytest.mark.integration

START_TIMEOUT = 60.0
FOLD_TIMEOUT = 120.0


def folded(workers: list[Worker]) -> float:
    total = 0.0
    for w in workers:
        with contextlib.suppress(httpx.HTTPError):
            total += w.metric('foldmem_events_folded_total{status="folded"}')
    return total


async def test_events_to_intents_api_and_deadletter(cluster: Cluster) -> None:
    worker = cluster.start_worker()
    streams = make_streams(3, 30)
    events = interleave(streams)
    bad_lines = [line for line in BAD.read_bytes().splitlines() if b'"id": "bad-' in line]
    bad: list[tuple[bytes | None, bytes]] = [(b"alice", line) for line in bad_lines]
    bad.append((b"alice", b"not json at all"))
    wrong_key = events[0].model_copy(update={"id": "wrong-key-1"})
    bad.append((b"someone-else", wrong_key.model_dump_json().encode()))
    far_future = events[0].model_copy(
        update={"id": "far-future-1", "ts": datetime(9999, 12, 31, tzinfo=UTC)}
    )
    bad.append((far_future.tenant.encode(), far_future.model_dump_json().encode()))
    await cluster.produce(messages(events) + bad)

    wait_for(worker.ready, START_TIMEOUT, "worker ready", [worker])
    wait_for(lambda: folded([worker]) >= len(events), FOLD_TIMEOUT, "all events folded", [worker])
    wait_for(
        lambda: worker.metric("foldmem_deadletter_total") >= len(bad), 30, "dead letters", [worker]
    )

    # intents on the intents topic: key = tenant, message_id header, stable ids
    records = await consume_all(cluster.broker, cluster.intents)
    assert records, "no intent message was published"
    by_tenant: dict[str, set[str]] = defaultdict(set)
    for record in records:
        message = IntentMessage.model_validate_json(record.value)
        assert record.key == message.tenant.encode()
        assert dict(record.headers)["message_id"] == message.message_id.encode()
        by_tenant[message.tenant].add(message.intent.id)

    # the API of the worker answers for every tenant, and knows the published intents
    for tenant in streams:
        graph = worker.get(f"/tenants/{tenant}/graph")
        assert graph.status_code == 200, graph.text
        intents = worker.get(f"/tenants/{tenant}/intents")
        assert intents.status_code == 200
        assert by_tenant[tenant] <= {i["id"] for i in intents.json()}
    metrics = worker.get("/metrics").text
    for name in (
        "foldmem_fold_seconds_bucket",
        "foldmem_consumer_lag",
        "foldmem_llm_calls",
        "foldmem_llm_tokens",
        "foldmem_intents_emitted_total",
        'foldmem_fold_step_seconds_total{step="context"}',
        'foldmem_fold_step_seconds_total{step="emerge"}',
    ):
        assert name in metrics

    # dead letters: original bytes, the reason, the source topic/partition/offset
    dead = await consume_all(cluster.broker, cluster.deadletter)
    assert sorted(r.value for r in dead) == sorted(v for _, v in bad)
    for record in dead:
        headers = {k: v.decode() for k, v in record.headers}
        assert headers["reason"]
        assert headers["source_topic"] == cluster.events
        assert int(headers["source_partition"]) >= 0 and int(headers["source_offset"]) >= 0
    reasons = " | ".join(dict(r.headers)["reason"].decode() for r in dead)
    assert "timezone-aware" in reasons and "key" in reasons
    assert "FOLDMEM_MAX_FUTURE_DAYS" in reasons  # refused: it would move the stream clock

    # state: every changelog record sits on its tenant's partition; the state equals an
    # uninterrupted in-process fold of the same streams
    changelog = await consume_all(cluster.broker, cluster.changelog)
    for record in changelog:
        tenant = split_key(record.key)[0]
        assert record.partition == partition_for(tenant, cluster.partitions), record.key
    expected = await reference(streams)
    got = recovered(changelog)
    assert set(got) == set(expected)
    for tenant in expected:
        assert not diff(expected[tenant], got[tenant]), (
            f"{tenant}: {diff(expected[tenant], got[tenant])}"
        )


@pytest.mark.parametrize("fold_batch_size", [1, 64], ids=["one_at_a_time", "batches_of_64"])
async def test_kill9_then_new_worker_loses_nothing_and_applies_nothing_twice(
    cluster: Cluster, fold_batch_size: int
) -> None:
    cluster.fold_batch_size = fold_batch_size
    streams = make_streams(4, 30)
    events = interleave(streams)
    first = cluster.start_worker()
    wait_for(first.ready, START_TIMEOUT, "first worker ready", [first])
    await cluster.produce(messages(events))
    wait_for(lambda: folded([first]) >= len(events) // 3, FOLD_TIMEOUT, "a third folded", [first])
    first.kill9()  # in the middle of the stream

    second = cluster.start_worker()
    wait_for(second.ready, START_TIMEOUT, "second worker ready", [second])
    # the second worker recovers the state and folds the rest: per tenant, every event exactly once

    def all_folded() -> bool:
        for tenant in streams:
            r = second.get(f"/tenants/{tenant}/graph", params={"limit": 1})
            if r.status_code != 200:
                return False
        tenants = second.get("/tenants")
        if tenants.status_code != 200:
            return False
        counts = {t["tenant"]: t["events_folded"] for t in tenants.json()}
        return all(counts.get(t) == len(evs) for t, evs in streams.items())

    wait_for(all_folded, FOLD_TIMEOUT, "every event folded after the crash", [second])
    expected = await reference(streams)
    got = await changelog_matches(cluster, expected, within_s=FOLD_TIMEOUT)
    for tenant in expected:
        assert not diff(expected[tenant], got[tenant]), (
            f"{tenant}: {diff(expected[tenant], got[tenant])}"
        )
        events_folded = orjson.loads(got[tenant][("m", "events_folded")])
        assert events_folded == len(streams[tenant])


async def test_two_workers_split_partitions_and_answer_every_tenant(cluster: Cluster) -> None:
    streams = make_streams(6, 12)
    events = interleave(streams)
    one, two = cluster.start_worker(), cluster.start_worker()
    await cluster.produce(messages(events))
    wait_for(lambda: one.ready() and two.ready(), START_TIMEOUT, "both ready", [one, two])
    wait_for(lambda: folded([one, two]) >= len(events), FOLD_TIMEOUT, "all folded", [one, two])

    def owned(worker: Worker) -> set[str]:
        r = worker.get("/tenants")
        return {t["tenant"] for t in r.json()} if r.status_code == 200 else set()

    wait_for(lambda: owned(one) and owned(two), 30, "both workers own tenants", [one, two])
    mine, theirs = owned(one), owned(two)
    assert mine and theirs and not (mine & theirs)
    assert mine | theirs == set(streams)
    # each worker answers for every tenant: locally or forwarded to the owner
    for worker in (one, two):
        for tenant, evs in streams.items():
            r = worker.get(f"/tenants/{tenant}/intents")
            assert r.status_code == 200, r.text
            g = worker.get(f"/tenants/{tenant}/graph")
            assert g.status_code == 200
            assert sum(1 for n in g.json()["nodes"] if n["kind"] == "EVENT") == len(evs)
