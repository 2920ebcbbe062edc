"""The read API over real HTTP on a loopback port (uvicorn in a background thread)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream_app.api.app import create_app
from stream_app.api.server import ApiServer
from stream_app.settings import Settings
from tests.app.conftest import app_settings, quiet_hub


class LiveApi:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.url = ""
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.error: BaseException | None = None

    async def _main(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self.hub, self.printed = quiet_hub(self.settings)
            server = ApiServer(create_app(self.hub, self.settings), "127.0.0.1", 0)
            server.start()
            await server.started()
            self.url = server.url
            self._ready.set()
            await self._stop.wait()
            await server.stop()
            self.hub.store.close()
        except BaseException as exc:
            self.error = exc
            self._ready.set()

    def __enter__(self) -> LiveApi:
        self._thread.start()
        assert self._ready.wait(60)
        if self.error:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


@pytest.fixture
def api(sample_dir: Path) -> Iterator[httpx.Client]:
    with LiveApi(app_settings(sample_dir)) as live, httpx.Client(base_url=live.url) as client:
        client.live = live  # type: ignore[attr-defined]
        yield client


def test_health_and_openapi(api: httpx.Client) -> None:
    health = api.get("/health").json()
    assert health["status"] == "ok" and health["tenants"] == 1
    assert health["embedder"] == "hashing-v1-256"
    assert health["planner"] == "heuristic"  # the planner in use, not the setting ("auto")
    spec = api.get("/openapi.json").json()
    for path in (
        "/tenants",
        "/tenants/{tenant}/graph",
        "/tenants/{tenant}/nodes/{node_id}",
        "/tenants/{tenant}/intents",
        "/tenants/{tenant}/intents/{intent_id}/status",
        "/tenants/{tenant}/search",
    ):
        assert path in spec["paths"], path
    assert api.get("/docs").status_code == 200


def test_tenants_and_graph(api: httpx.Client) -> None:
    (alice,) = api.get("/tenants").json()
    assert alice["tenant"] == "alice" and alice["events_folded"] > 100
    graph = api.get("/tenants/alice/graph").json()
    assert len(graph["nodes"]) == alice["nodes"]
    assert len(graph["edges"]) == alice["edges"]
    events = api.get("/tenants/alice/graph", params={"kind": "EVENT"}).json()["nodes"]
    assert events and all(n["kind"] == "EVENT" and n["source_event_id"] for n in events)
    window = api.get(
        "/tenants/alice/graph",
        params={
            "kind": "EVENT",
            "since": "2026-11-05T00:00:00+00:00",
            "until": "2026-11-06T00:00:00+00:00",
        },
    ).json()["nodes"]
    assert 0 < len(window) < len(events)
    assert all("2026-11-05" <= n["ts"][:10] <= "2026-11-06" for n in window)
    assert api.get("/tenants/nobody/graph").status_code == 404


def test_node_with_neighbourhood(api: httpx.Client) -> None:
    concepts = api.get("/tenants/alice/graph", params={"kind": "CONCEPT"}).json()["nodes"]
    node_id = concepts[0]["id"]
    body = api.get(f"/tenants/alice/nodes/{node_id}").json()
    assert body["node"]["id"] == node_id
    assert body["edges"] and all("weight" in e for e in body["edges"])
    assert {n["id"] for n in body["neighbours"]} <= {e["src"] for e in body["edges"]} | {
        e["dst"] for e in body["edges"]
    }
    assert api.get("/tenants/alice/nodes/nope").status_code == 404


def test_intents_and_status_change(api: httpx.Client) -> None:
    pending = api.get("/tenants/alice/intents", params={"status": "pending"}).json()
    assert pending
    intent_id = pending[0]["id"]
    already = api.get("/tenants/alice/intents", params={"status": "resolved"}).json()
    reply = api.post(
        f"/tenants/alice/intents/{intent_id}/status", json={"status": "resolve", "note": "booked"}
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    assert body["intent"]["status"] == "resolved"
    assert body["messages"][0]["type"] == "intent.status_changed"
    resolved = api.get("/tenants/alice/intents", params={"status": "resolved"}).json()
    assert sorted(i["id"] for i in resolved) == sorted([i["id"] for i in already] + [intent_id])
    again = api.post(f"/tenants/alice/intents/{intent_id}/status", json={"status": "pending"})
    assert again.status_code == 409
    assert (
        api.post(f"/tenants/alice/intents/{intent_id}/status", json={"status": "bogus"}).status_code
        == 422
    )
    live = api.live  # type: ignore[attr-defined]
    assert "pending -> resolved" in live.printed.getvalue()
    assert intent_id in live.settings.intents_path.read_text()


def test_search(api: httpx.Client) -> None:
    hits = api.get("/tenants/alice/search", params={"q": "dentist", "k": 5}).json()["hits"]
    assert 0 < len(hits) <= 5
    assert "substring" in hits[0]["match"]
    assert "dentist" in (hits[0]["node"]["title"] + hits[0]["node"]["text"]).lower()


def test_token_required_when_configured(sample_dir: Path) -> None:
    settings = app_settings(sample_dir, api_token="t0ken")
    with LiveApi(settings) as live, httpx.Client(base_url=live.url) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/tenants").status_code == 401
        bad = {"Authorization": "Bearer wrong"}
        assert client.get("/tenants", headers=bad).status_code == 401
        good = {"Authorization": "Bearer t0ken"}
        assert client.get("/tenants", headers=good).status_code == 200


def test_non_loopback_without_token_refused(sample_dir: Path) -> None:
    from schemas.errors import ConfigError

    settings = app_settings(sample_dir)
    object.__setattr__(settings, "api_host", "0.0.0.0")
    hub, _ = quiet_hub(app_settings(sample_dir))
    with pytest.raises(ConfigError):
        create_app(hub, settings)
    hub.store.close()
