"""POST /tenants/{tenant}/events over real loopback HTTP: auth, single, batch, invalid items."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def event(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"http-{n}",
        "source": "note",
        "ts": f"2026-11-0{1 + n % 8}T09:00:00+00:00",
        "title": f"Call the plumber about the leak #{n}",
        "body": "The bathroom ceiling leak needs a plumber before Friday.",
        **extra,
    }


@pytest.fixture
def live(data_dir: Path) -> Iterator[tuple[httpx.Client, Path]]:
    settings = app_settings(data_dir, api_token=TOKEN)
    with LiveApi(settings) as api, httpx.Client(base_url=api.url, timeout=60) as client:
        yield client, data_dir


def test_no_token_configured_means_403(data_dir: Path) -> None:
    with LiveApi(app_settings(data_dir)) as api, httpx.Client(base_url=api.url) as client:
        response = client.post("/tenants/bob/events", json=event(1))
        assert response.status_code == 403
        assert "FOLDMEM_API_TOKEN" in response.json()["detail"]
        assert client.get("/health").status_code == 200  # the read API itself still works


def test_token_required(live: tuple[httpx.Client, Path]) -> None:
    client, _ = live
    assert client.post("/tenants/bob/events", json=event(1)).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert client.post("/tenants/bob/events", json=event(1), headers=wrong).status_code == 401
    assert "/tenants/{tenant}/events" in client.get("/openapi.json", headers=AUTH).json()["paths"]


def test_single_event_folds_once(live: tuple[httpx.Client, Path]) -> None:
    client, _ = live
    first = client.post("/tenants/bob/events", json=event(1), headers=AUTH)
    assert first.status_code == 200, first.text
    assert first.json()["results"] == [
        {"index": 0, "id": "http-1", "status": "folded", "code": 200, "errors": []}
    ]
    again = client.post("/tenants/bob/events", json=event(1), headers=AUTH)
    assert again.json()["results"][0]["status"] == "duplicate"
    nodes = client.get("/tenants/bob/graph", params={"kind": "EVENT"}, headers=AUTH).json()
    assert len(nodes["nodes"]) == 1


def test_batch_with_invalid_items(live: tuple[httpx.Client, Path]) -> None:
    client, data_dir = live
    batch = [
        event(1),
        event(2, ts="2026-11-02T09:00:00"),  # naive time
        event(3, tenant="mallory"),  # another tenant
        "not an object",
        event(4, tenant="bob"),
        {"id": "x", "source": "note"},  # no ts
    ]
    response = client.post("/tenants/bob/events", json=batch, headers=AUTH)
    assert response.status_code == 207, response.text
    body = response.json()
    assert (body["accepted"], body["rejected"]) == (2, 4)
    by_index = {r["index"]: r for r in body["results"]}
    assert [by_index[i]["status"] for i in range(6)] == [
        "folded", "rejected", "rejected", "rejected", "folded", "rejected",
    ]  # fmt: skip
    assert all(by_index[i]["code"] == 422 for i in (1, 2, 3, 5))
    assert by_index[1]["errors"][0]["field"] == "ts"
    assert "timezone-aware" in by_index[1]["errors"][0]["message"]
    assert by_index[2]["errors"][0]["field"] == "tenant"
    assert by_index[5]["errors"][0]["field"] == "ts"
    lines = (data_dir / "deadletter.jsonl").read_bytes().splitlines()
    dead = [orjson.loads(line) for line in lines]
    assert sorted(d["location"] for d in dead) == ["item 1", "item 2", "item 3", "item 5"]
    assert all(d["source"] == "http:POST /tenants/bob/events" for d in dead)
    tenants = client.get("/tenants", headers=AUTH).json()
    assert [(t["tenant"], t["events_folded"]) for t in tenants] == [("bob", 2)]


def test_all_invalid_is_422_and_bad_json_400(live: tuple[httpx.Client, Path]) -> None:
    client, _ = live
    response = client.post("/tenants/bob/events", json=[{"id": "a"}], headers=AUTH)
    assert response.status_code == 422 and response.json()["rejected"] == 1
    bad = client.post("/tenants/bob/events", content=b"{nope", headers=AUTH)
    assert bad.status_code == 400
    assert client.post("/tenants/bob/events", json=[], headers=AUTH).status_code == 422


def test_a_tenant_kept_busy_by_another_process_is_503_with_retry_after(data_dir: Path) -> None:
    from stream_app.embedded.interlock import TenantLocks

    settings = app_settings(data_dir, api_token=TOKEN, write_lock_timeout_s=0.3)
    other = TenantLocks(settings.locks_path)  # another writer: its own lock files' handles
    with LiveApi(settings) as api, httpx.Client(base_url=api.url, timeout=60) as client:
        with other.try_hold("bob") as held:
            assert held
            busy = client.post("/tenants/bob/events", json=[event(1), event(2)], headers=AUTH)
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
        body = busy.json()
        assert (body["accepted"], body["rejected"], body["unavailable"]) == (0, 0, 2)
        assert {r["status"] for r in body["results"]} == {"unavailable"}
        assert {r["code"] for r in body["results"]} == {503}
        assert not (data_dir / "deadletter.jsonl").exists()  # nothing invalid about them
        again = client.post("/tenants/bob/events", json=[event(1), event(2)], headers=AUTH)
        assert again.status_code == 200
        assert [r["status"] for r in again.json()["results"]] == ["folded", "folded"]
