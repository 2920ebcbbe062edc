"""After a hard delete or a forget, neither the API, the CLI nor a restart (SQLite reload)
brings the deleted content back."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import httpx
import orjson
import pytest

from stream_app.api.app import create_app
from stream_app.embedded.hub import MemoryHub
from stream_app.settings import Settings
from tests.app.conftest import app_settings, invoke, quiet_hub
from tests.facts.helpers import REVISIONS, stance_stream
from topologies.engine import event_node_id, event_to_node
from topologies.privacy import ForgottenEventError

MIDDLE = "Zumba classes on Thursdays"
SECRET = "birthday treat"


async def _hub_with_stream(settings: Settings) -> MemoryHub:
    hub, _ = quiet_hub(settings)
    for event in stance_stream():
        await hub.fold(event)
    return hub


def _db_bytes(settings: Settings) -> bytes:
    """Every file of the data dir (store, WAL, side files), as raw bytes."""
    return b"".join(p.read_bytes() for p in sorted(settings.data_dir.rglob("*")) if p.is_file())


def _where(settings: Settings, text: str) -> list[str]:
    return [
        str(p)
        for p in settings.data_dir.rglob("*")
        if p.is_file() and text.encode() in p.read_bytes()
    ]


def _rows(settings: Settings, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(settings.db_path) as db:
        return list(db.execute(sql))


async def _api_get(
    hub: MemoryHub, settings: Settings, path: str, method: str = "GET", json: object | None = None
) -> httpx.Response:
    app = create_app(hub, settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        return await client.request(method, path, json=json)


async def test_forget_event_everywhere(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = await _hub_with_stream(settings)
    try:
        query = {"text": SECRET, "k": 10}
        before = await _api_get(hub, settings, "/tenants/alice/query", "POST", query)
        assert SECRET in before.text
        deleted = await _api_get(hub, settings, "/tenants/alice/events/stance-3", "DELETE")
        assert deleted.status_code == 200 and deleted.json()["deleted"]["FACT"] == 1
        for path, method, body in (
            ("/tenants/alice/query", "POST", query),
            ("/tenants/alice/export", "GET", None),
            ("/tenants/alice/graph", "GET", None),
        ):
            response = await _api_get(hub, settings, path, method, body)
            assert response.status_code == 200
            data = response.json()
            assert SECRET not in orjson.dumps(data.get("items", data)).decode()
        chain = (
            await _api_get(
                hub,
                settings,
                "/tenants/alice/query",
                "POST",
                {"text": MIDDLE, "k": 3, "kinds": ["FACT"]},
            )
        ).json()
        assert [c["text"] for c in chain["items"][0]["chain"]] == [
            REVISIONS[0],
            REVISIONS[1],
            REVISIONS[2],
            REVISIONS[4],
        ]
        with pytest.raises(ForgottenEventError):
            await hub.fold(stance_stream()[6])  # the re-sent copy of stance-3
        audit = (await _api_get(hub, settings, "/tenants/alice/privacy/audit")).json()
        assert audit[0]["action"] == "forget_event" and SECRET not in orjson.dumps(audit).decode()
    finally:
        hub.store.close()
    assert SECRET.encode() not in _db_bytes(settings)  # not even in free pages or the WAL
    restarted, _ = quiet_hub(settings)  # restart: reload from SQLite
    try:
        assert (
            SECRET
            not in orjson.dumps(
                restarted.view("alice").graph.g.nodes(data=True), default=str
            ).decode()
        )
        with pytest.raises(ForgottenEventError):
            await restarted.fold(stance_stream()[6])
    finally:
        restarted.store.close()
    code, out, err = invoke("export", "--tenant", "alice")
    assert code == 0, err
    assert SECRET not in out and REVISIONS[4] in out
    code, out, err = invoke("query", SECRET, "--tenant", "alice", "--json")
    assert code == 0, err
    assert SECRET not in orjson.dumps(orjson.loads(out)["items"]).decode()


def test_forget_event_from_the_cli(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = asyncio.run(_hub_with_stream(settings))
    hub.store.close()
    code, out, err = invoke("forget-event", "stance-3", "--tenant", "alice", "--actor", "me")
    assert code == 0, err
    assert "FACT: 1" in out and "relinked: 1" in out
    code, out, _ = invoke("audit", "--tenant", "alice")
    assert '"actor": "me"' in out
    code, out, _ = invoke("export", "--tenant", "alice")
    assert SECRET not in out
    assert SECRET.encode() not in _db_bytes(settings), _where(settings, SECRET)


def test_privacy_commands_refuse_a_tenant_the_data_dir_does_not_hold(data_dir: Path) -> None:
    """On a Kafka deployment the local data dir is empty: the CLI says so instead of
    tombstoning into a store nobody reads."""
    for args in (
        ("forget-event", "e1", "--tenant", "ghost"),
        ("forget-tenant", "--tenant", "ghost", "--yes"),
        ("consolidate", "--tenant", "ghost"),
    ):
        code, out, err = invoke(*args)
        assert code != 0
        assert "tenant 'ghost' not found" in err and "worker's API" in err, (args, out, err)


async def test_forget_tenant_everywhere(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = await _hub_with_stream(settings)
    try:
        refused = await _api_get(hub, settings, "/tenants/alice", "DELETE")
        assert refused.status_code == 400
        done = await _api_get(hub, settings, "/tenants/alice?confirm=true", "DELETE")
        assert done.status_code == 200
        export = (await _api_get(hub, settings, "/tenants/alice/export")).json()
        assert export["nodes"] == [] and export["event_states"] == {}
        for event in stance_stream():
            with pytest.raises(ForgottenEventError):
                await hub.fold(event)
    finally:
        hub.store.close()
    for table in ("nodes", "edges", "vectors", "event_states", "aliases", "intent_outbox"):
        assert _rows(settings, f"SELECT COUNT(*) FROM {table} WHERE tenant = 'alice'") == [(0,)]
    keys = [k for (k,) in _rows(settings, "SELECT key FROM tenant_meta WHERE tenant = 'alice'")]
    assert keys and all(k.startswith("privacy.") for k in keys)
    blob = _db_bytes(settings)
    assert all(text.encode() not in blob for text in REVISIONS)
    code, out, _ = invoke("export", "--tenant", "alice")
    assert code == 0 and all(text not in out for text in REVISIONS)


async def _consolidate_and_enable_core(settings: Settings) -> None:
    hub = await _hub_with_stream(settings)
    try:
        report = await hub.consolidate("alice", budget_s=10)
        assert report.fresh_facts >= 5
        layers = await _api_get(
            hub,
            settings,
            "/tenants/alice/privacy/layers",
            "PUT",
            {"layers": {"core_schemas": True}},
        )
        assert layers.json()["core_schemas"] is True
    finally:
        hub.store.close()


def test_forget_tenant_from_the_cli_and_consolidate(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    asyncio.run(_consolidate_and_enable_core(settings))
    code, out, err = invoke("layers", "--tenant", "alice", "--json")
    assert code == 0 and orjson.loads(out)["core_schemas"] is True, err
    code, out, err = invoke("consolidate", "--tenant", "alice", "--json")
    assert code == 0, err
    assert orjson.loads(out)["layers"]["core_schemas"] is True
    code, out, err = invoke("forget-tenant", "--tenant", "alice", "--yes")
    assert code == 0, err
    code, out, _ = invoke("export", "--tenant", "alice")
    assert all(text not in out for text in REVISIONS)


async def test_hub_helpers_directly(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = await _hub_with_stream(settings)
    try:
        report = await hub.forget_event("alice", "never-seen", "me")
        assert not report.found and report.deleted == {}
        await hub.forget_tenant("alice", "me")
        assert hub.view("alice").graph.count() == 0
    finally:
        hub.store.close()


async def test_nightly_runs_when_idle_and_due(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = await _hub_with_stream(settings)
    now = [1000.0]
    hub.nightly.wall = lambda: now[0]
    try:
        assert await hub.nightly_if_due() == {}  # first look: not idle yet
        ran = await hub.nightly_if_due()
        assert set(ran) == {"alice"}
        now[0] += 60
        assert await hub.nightly_if_due() == {}  # not due again yet
        now[0] += 21 * 3600
        assert set(await hub.nightly_if_due()) == {"alice"}
    finally:
        hub.store.close()


async def test_forget_event_drops_the_texts_the_engine_remembers(data_dir: Path) -> None:
    settings = app_settings(data_dir)
    hub = await _hub_with_stream(settings)
    try:
        await _api_get(hub, settings, "/tenants/alice/query", "POST", {"text": SECRET, "k": 3})
        assert SECRET in hub.engine.embedder.kept()  # a query's text is kept across folds
        parser = hub.engine.namer.parser
        event = next(e for e in stance_stream() if e.id == "stance-3")
        node = event_to_node(event, event_node_id("alice", event.id))
        texts = [text for text in parser.event_texts([node]) if SECRET in text]
        assert texts and parser.unread([], texts) == ([], [])  # its parse is kept too
        deleted = await _api_get(hub, settings, "/tenants/alice/events/stance-3", "DELETE")
        assert deleted.status_code == 200
        assert not [text for text in hub.engine.embedder.kept() if SECRET in text]
        assert parser.unread([], texts) == ([], texts)  # no parse quotes it any more
    finally:
        hub.store.close()
