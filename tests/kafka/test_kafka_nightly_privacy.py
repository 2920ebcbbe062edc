"""The nightly engine and the privacy routes on a Kafka worker, through a real broker (tansu):
what a user of the worker's API asks, what the changelog keeps, what a restarted worker
(state recovered from the changelog) answers, and what happens to a re-sent event."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from kafka_helpers import SAMPLE, Cluster, Worker, consume_all, messages, wait_for

from schemas.events import RawEvent
from schemas.intents import IntentMessage
from stream_app.kafka.codec import split_key
from tests.facts.helpers import REVISIONS, stance_stream
from tests.nightly.helpers import domain_stream

pytestmark = pytest.mark.integration

START_TIMEOUT = 60.0
FOLD_TIMEOUT = 90.0
RETRY_503 = 20.0
SECRET = "birthday treat"  # only in event stance-3 (REVISIONS[3]) and what was derived from it
FORGOTTEN = "deleted at the user's request"  # the dead-letter reason of a re-sent copy


@dataclass
class TunedCluster(Cluster):
    """A Cluster whose workers get extra environment (e.g. a short sweep interval)."""

    extra: dict[str, str] = field(default_factory=dict)

    def env(self, api_port: int) -> dict[str, str]:
        return {**super().env(api_port), **self.extra}


@pytest.fixture
def fast_sweep_cluster(broker: str, tmp_path: Path) -> Iterator[TunedCluster]:
    """Sweeps every second; a 10 s session timeout gives a night a 5 s budget (half of it),
    so the whole three-domain night (about 2 s) fits even on a loaded machine."""
    env = {"FOLDMEM_SWEEP_INTERVAL": "1", "FOLDMEM_KAFKA_SESSION_TIMEOUT": "10"}
    c = TunedCluster(broker, tmp_path, extra=env)
    try:
        yield c
    finally:
        c.stop()


# ------------------------------------------------------------------------ helpers
def call(worker: Worker, method: str, path: str, **kw: Any) -> httpx.Response:
    """An API call as a client makes it: a 503 (recovering, or the tenant moving between
    workers: ``Retry-After: 1``) is asked again, for up to RETRY_503 seconds."""
    deadline = time.monotonic() + RETRY_503
    while True:
        r = httpx.request(method, worker.url + path, timeout=30.0, **kw)
        if r.status_code != 503 or time.monotonic() > deadline:
            return r
        time.sleep(float(r.headers.get("retry-after", "1")))


def owned_tenants(worker: Worker) -> dict[str, int]:
    """Tenant -> events folded, for the tenants this worker owns ({} while not ready)."""
    try:
        r = call(worker, "GET", "/tenants")
    except httpx.HTTPError:
        return {}
    return {t["tenant"]: t["events_folded"] for t in r.json()} if r.status_code == 200 else {}


def stream(events: list[RawEvent]) -> list[RawEvent]:
    """received_at = ts, so every replay folds the same values."""
    return [e.model_copy(update={"received_at": e.ts}) for e in events]


async def start_and_fold(
    cluster: Cluster, events: list[RawEvent], workers: int = 1
) -> list[Worker]:
    started = [cluster.start_worker() for _ in range(workers)]
    await cluster.produce(messages(events))
    wanted: dict[str, int] = {}
    for event in events:
        wanted[event.tenant] = wanted.get(event.tenant, 0) + 1

    def all_folded() -> bool:
        seen: dict[str, int] = {}
        for w in started:
            seen.update(owned_tenants(w))
        return seen == wanted

    wait_for(lambda: all(w.ready() for w in started), START_TIMEOUT, "workers ready", started)
    wait_for(all_folded, FOLD_TIMEOUT, "every event folded", started)
    return started


def restart(cluster: Cluster, old: Worker, tenant: str) -> Worker:
    """Stop the worker, start a new one: its state is recovered from the changelog."""
    old.stop()
    new = cluster.start_worker()
    wait_for(
        lambda: new.ready() and tenant in owned_tenants(new),
        START_TIMEOUT,
        f"restarted worker owns {tenant}",
        [new],
    )
    return new


def export(worker: Worker, tenant: str) -> dict[str, Any]:
    r = call(worker, "GET", f"/tenants/{tenant}/export")
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def what_the_api_shows(worker: Worker, tenant: str, text: str) -> str:
    """Everything the read API answers about the tenant for a text: export, graph, and the
    hits of query, search and cued recall (not the text they echo), as one string."""
    path = f"/tenants/{tenant}"
    answers: list[tuple[httpx.Response, str | None]] = [
        (call(worker, "GET", f"{path}/export"), None),
        (call(worker, "GET", f"{path}/graph"), None),
        (call(worker, "POST", f"{path}/query", json={"text": text, "k": 20}), "items"),
        (call(worker, "GET", f"{path}/search", params={"q": text, "k": 20}), "hits"),
        (call(worker, "POST", f"{path}/recall", json={"text": text, "threshold": 0.0}), "items"),
    ]
    shown = []
    for r, hits in answers:
        assert r.status_code == 200, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
        shown.append(r.json() if hits is None else r.json()[hits])
    return orjson.dumps(shown).decode()


def nightly_nodes(worker: Worker, tenant: str, kind: str) -> set[str]:
    """Ids of the nodes of a kind that a nightly run wrote."""
    r = call(worker, "GET", f"/tenants/{tenant}/graph", params={"kind": kind})
    assert r.status_code == 200, r.text
    return {
        n["id"]
        for n in r.json()["nodes"]
        if str(n["attrs"].get("origin", "")).startswith("nightly")
    }


def live_changelog_bytes(records: list[Any], tenant: str) -> bytes:
    """The tenant's records that a recovering worker keeps (the last value per key; a None
    value is a tombstone), raw: a deletion record would still carry the previous payload."""
    live: dict[bytes, bytes] = {}
    for record in records:
        if record.value is None:
            live.pop(record.key, None)
        else:
            live[record.key] = record.value
    assert any(split_key(key)[0] == tenant for key in live), f"no records of {tenant}"
    return b"".join(value for key, value in live.items() if split_key(key)[0] == tenant)


async def dead_letter_reasons(cluster: Cluster) -> list[str]:
    return [
        dict(r.headers)["reason"].decode()
        for r in await consume_all(cluster.broker, cluster.deadletter)
    ]


# -------------------------------------------------------------------------- tests
async def test_consolidate_on_a_worker_writes_the_night_and_a_new_owner_recovers_it(
    cluster: Cluster,
) -> None:
    one, two = await start_and_fold(cluster, stream(domain_stream("dana")), workers=2)
    owner, other = (one, two) if "dana" in owned_tenants(one) else (two, one)
    assert nightly_nodes(owner, "dana", "CONCEPT") == set()

    # asked of the worker that does not own dana: forwarded to the owner, which runs it
    r = call(other, "POST", "/tenants/dana/consolidate", json={"budget_s": 30})
    assert r.status_code == 200, r.text
    night = r.json()
    assert night["tenant"] == "dana" and night["schemas_created"] >= 1

    schemas = nightly_nodes(owner, "dana", "CONCEPT")
    assert len(schemas) == night["schemas_created"]
    assert nightly_nodes(other, "dana", "CONCEPT") == schemas  # every worker answers the same
    assert export(owner, "dana")["meta"]["nightly.last_run"]["now"] == night["now"]
    intents = nightly_nodes(owner, "dana", "INTENT")
    assert len(intents) == night["intents_created"]

    # the night's intents are on the intents topic, like a fold's
    published = [
        IntentMessage.model_validate_json(r.value)
        for r in await consume_all(cluster.broker, cluster.intents)
    ]
    assert intents <= {m.intent.id for m in published if m.type == "intent.created"}

    # the worker that ran it stops: the other one takes dana over, from the changelog
    owner.stop()
    wait_for(
        lambda: "dana" in owned_tenants(other), START_TIMEOUT, "dana moved to the other", [other]
    )
    assert nightly_nodes(other, "dana", "CONCEPT") == schemas
    assert nightly_nodes(other, "dana", "INTENT") == intents
    assert export(other, "dana")["meta"]["nightly.last_run"]["now"] == night["now"]


async def test_the_sweep_timer_runs_the_night_for_an_idle_tenant(
    fast_sweep_cluster: TunedCluster,
) -> None:
    cluster = fast_sweep_cluster
    (worker,) = await start_and_fold(cluster, stream(domain_stream("dana")))

    def night_written() -> bool:
        return "nightly.last_run" in export(worker, "dana")["meta"]

    wait_for(night_written, 30, "a nightly run by the sweep timer", [worker])
    assert nightly_nodes(worker, "dana", "CONCEPT")
    nightly_intents = nightly_nodes(worker, "dana", "INTENT")
    assert nightly_intents, "the night wrote no intent"
    published = {
        IntentMessage.model_validate_json(r.value).intent.id
        for r in await consume_all(cluster.broker, cluster.intents)
    }
    assert nightly_intents <= published


async def test_forgetting_on_a_worker_survives_a_restart_and_resent_events_are_refused(
    cluster: Cluster,
) -> None:
    alice, bob, carol = (stream(stance_stream(t)) for t in ("alice", "bob", "carol"))
    (worker,) = await start_and_fold(cluster, alice + bob + carol)
    assert SECRET in what_the_api_shows(worker, "alice", SECRET)

    # alice forgets one event, bob forgets everything, carol opts in to core schemas
    actor = {"X-Foldmem-Actor": "me"}
    r = call(worker, "DELETE", "/tenants/alice/events/stance-3", headers=actor)
    assert r.status_code == 200, r.text
    assert r.json()["found"] is True and r.json()["deleted"]["EVENT"] == 1
    refused = call(worker, "DELETE", "/tenants/bob")
    assert refused.status_code == 400 and "confirm" in refused.text
    r = call(worker, "DELETE", "/tenants/bob", params={"confirm": "true"}, headers=actor)
    assert r.status_code == 200, r.text
    assert r.json()["deleted"]["EVENT"] == len(bob)
    unknown = call(worker, "DELETE", "/tenants/nobody", params={"confirm": "true"})
    assert unknown.status_code == 404, unknown.text  # never a silent success
    opted = call(
        worker, "PUT", "/tenants/carol/privacy/layers", json={"layers": {"core_schemas": True}}
    )
    assert opted.status_code == 200 and opted.json()["core_schemas"] is True, opted.text

    def what_each_worker_must_show(w: Worker) -> None:
        # alice: the event and what was derived from it only are gone; the audit says who
        assert SECRET not in what_the_api_shows(w, "alice", SECRET)
        assert REVISIONS[4] in orjson.dumps(export(w, "alice")["nodes"]).decode()
        (entry,) = call(w, "GET", "/tenants/alice/privacy/audit").json()
        assert entry["action"] == "forget_event" and entry["actor"] == "me"
        assert SECRET not in orjson.dumps(entry).decode()
        # bob: nothing left but the hashed tombstones and the audit log
        data = export(w, "bob")
        assert data["nodes"] == [] and data["event_states"] == {} and data["tombstones"] == len(bob)
        assert not any(text in what_the_api_shows(w, "bob", REVISIONS[0]) for text in REVISIONS)
        # carol: untouched, with her new setting
        assert all(text in orjson.dumps(export(w, "carol")["nodes"]).decode() for text in REVISIONS)
        assert call(w, "GET", "/tenants/carol/privacy/layers").json()["core_schemas"] is True

    what_each_worker_must_show(worker)
    # the changelog's live state (what a recovering worker rebuilds) holds no trace of it
    changelog = await consume_all(cluster.broker, cluster.changelog)
    assert SECRET.encode() not in live_changelog_bytes(changelog, "alice")
    bob_state = live_changelog_bytes(changelog, "bob")
    assert not any(text.encode() in bob_state for text in REVISIONS)

    restarted = restart(cluster, worker, "alice")
    what_each_worker_must_show(restarted)
    assert owned_tenants(restarted)["alice"] == len(alice) - 1

    # the forgotten events sent again: refused and dead-lettered by the recovered worker
    resent = [e for e in alice if e.id == "stance-3"] + bob
    await cluster.produce(messages(resent))
    wait_for(
        lambda: restarted.metric("foldmem_deadletter_total") >= len(resent),
        30,
        "re-sent events dead-lettered",
        [restarted],
    )
    reasons = await dead_letter_reasons(cluster)
    assert len(reasons) == len(resent) and all(FORGOTTEN in r for r in reasons)
    what_each_worker_must_show(restarted)


async def test_forgetting_a_tenant_on_a_worker_retracts_its_intents(cluster: Cluster) -> None:
    lines = SAMPLE.read_bytes().splitlines()[:40]
    dave = [RawEvent.model_validate({**orjson.loads(x), "tenant": "dave"}) for x in lines]
    (worker,) = await start_and_fold(cluster, dave)
    before = {i["id"] for i in call(worker, "GET", "/tenants/dave/intents").json()}
    assert before, "the first 40 sample events make intents"
    r = call(worker, "DELETE", "/tenants/dave", params={"confirm": "true"})
    assert r.status_code == 200, r.text
    published = [orjson.loads(x.value) for x in await consume_all(cluster.broker, cluster.intents)]
    retractions = [m for m in published if m["type"] == "intent.retracted"]
    assert {m["intent"]["id"] for m in retractions} == before
    assert all(m["intent"]["title"] == "" and m["tenant"] == "dave" for m in retractions)
    assert all(m["reason"] == "tenant_forgotten" for m in retractions)
