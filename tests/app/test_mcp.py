"""The MCP server driven by the SDK's own client: in-process, over stdio (``foldmem mcp`` as
a subprocess), over streamable HTTP behind the token, and over a running API."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer

from stream_app.api.server import ApiServer
from stream_app.embedded.hub import MemoryHub
from stream_app.factory import build_hub
from stream_app.hub import explore
from stream_app.mcp.backends import ApiBackend, HubBackend
from stream_app.mcp.run import MCP_PATH, guarded_app, quiet_sinks
from stream_app.mcp.server import build_server
from stream_app.settings import Settings
from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TOOLS = {"query", "recall", "list_intents", "set_intent_status", "add_events", "get_node", "chain"}
TOKEN = "mcp-secret"


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def _error(result: Any) -> str:
    assert result.is_error, result
    return str(result.content[0].text)


@pytest.fixture
def hub(sample_dir: Path) -> Iterator[tuple[MemoryHub, Settings]]:
    settings = app_settings(sample_dir)
    memory_hub = build_hub(settings, sinks=quiet_sinks(settings))
    yield memory_hub, settings
    memory_hub.store.close()


@pytest.fixture
def server(hub: tuple[MemoryHub, Settings]) -> MCPServer:
    memory_hub, settings = hub
    return build_server(HubBackend(memory_hub, settings), "alice")


async def test_lists_the_tools_with_descriptions_and_a_resource(server: MCPServer) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert set(tools) == TOOLS
    assert all(len(t.description or "") > 80 for t in tools.values())
    assert "cites" in (tools["query"].description or "")
    assert "foldmem://intents/pending" in resources


async def test_query_on_the_sample_returns_cited_hits(server: MCPServer) -> None:
    async with Client(server) as client:
        found = _data(await client.call_tool("query", {"text": "water damage bathroom leak"}))
    assert found["tenant"] == "alice" and found["hits"]
    assert all(hit["cites_events"] and hit["why"] for hit in found["hits"])
    assert any("leak" in (h["title"] + h["text"]).lower() for h in found["hits"][:3])


async def test_intents_can_be_listed_opened_and_resolved(server: MCPServer) -> None:
    async with Client(server) as client:
        pending = _data(await client.call_tool("list_intents", {}))
        assert pending["items"] and all(i["status"] == "pending" for i in pending["items"])
        first = pending["items"][0]
        opened = _data(await client.call_tool("get_node", {"node_id": first["id"]}))
        assert opened["node"]["kind"] == "INTENT"
        assert opened["intent"]["why"] == first["why"] and opened["intent"]["evidence"]
        done = _data(
            await client.call_tool(
                "set_intent_status", {"intent_id": first["id"], "status": "resolve"}
            )
        )
        assert done["intent"]["status"] == "resolved"
        resolved = _data(await client.call_tool("list_intents", {"status": "resolved"}))
        assert first["id"] in {i["id"] for i in resolved["items"]}
        final = await client.call_tool(
            "set_intent_status", {"intent_id": first["id"], "status": "reopen"}
        )
    assert "resolved" in _error(final)  # resolved is final: a tool error with the reason


async def test_bad_arguments_are_tool_errors_not_crashes(server: MCPServer) -> None:
    async with Client(server) as client:
        wrong_type = await client.call_tool("query", {"text": "leak", "k": "many"})
        naive_time = await client.call_tool(
            "query", {"text": "leak", "as_of": "2026-11-10T10:00:00"}
        )
        unknown = await client.call_tool("get_node", {"node_id": "no-such-node"})
        no_tenant = await client.call_tool("query", {"text": "leak", "tenant": "nobody"})
        bad_verb = await client.call_tool(
            "set_intent_status", {"intent_id": "x", "status": "finish"}
        )
        still = _data(await client.call_tool("query", {"text": "passport"}))
    assert "k" in _error(wrong_type)
    assert "timezone" in _error(naive_time)
    assert "not found" in _error(unknown)
    assert "nobody" in _error(no_tenant)
    assert "status" in _error(bad_verb)
    assert still["hits"]  # the server goes on answering


async def test_add_events_validates_each_event_like_post_events(server: MCPServer) -> None:
    good = {
        "id": "mcp-note-1",
        "source": "note",
        "ts": "2026-11-22T09:00:00+01:00",
        "title": "Passport photos",
        "body": "Get new passport photos taken at the Bürgeramt before the appointment",
    }
    bad = {"id": "mcp-note-2", "source": "note", "ts": "yesterday", "title": "x"}
    async with Client(server) as client:
        answer = _data(await client.call_tool("add_events", {"events": [good, bad]}))
        again = _data(await client.call_tool("add_events", {"events": [good]}))
        found = _data(await client.call_tool("query", {"text": "passport photos Bürgeramt"}))
    assert answer["accepted"] == 1 and answer["rejected"] == 1
    rejected = answer["results"][1]
    assert rejected["status"] == "rejected" and rejected["errors"][0]["field"] == "ts"
    assert again["results"][0]["status"] == "duplicate"
    assert any("mcp-note-1" in hit["cites_events"] for hit in found["hits"])


async def test_chain_of_a_revised_fact(hub: tuple[MemoryHub, Settings], server: MCPServer) -> None:
    head = explore.nodes_page(hub[0], "alice", chained=True)["items"][0]
    async with Client(server) as client:
        found = _data(await client.call_tool("chain", {"node_id": head["id"]}))
    assert len(found["links"]) >= 2 and found["links"][-1]["current"]
    assert found["links"][-1]["id"] == head["id"]


async def test_pending_intents_resource(server: MCPServer) -> None:
    async with Client(server) as client:
        default = await client.read_resource("foldmem://intents/pending")
        named = await client.read_resource("foldmem://tenants/alice/intents/pending")
    page = json.loads(default.contents[0].text)
    assert page["items"] and all(i["status"] == "pending" for i in page["items"])
    assert json.loads(named.contents[0].text)["total"] == page["total"]


async def test_stdio_foldmem_mcp_answers_a_query(sample_dir: Path) -> None:
    env = {
        **os.environ,
        "FOLDMEM_DATA_DIR": str(sample_dir),
        "FOLDMEM_EMBEDDER": "hashing",
        "FOLDMEM_DEFAULT_TENANT": "alice",
        "FOLDMEM_LOG_LEVEL": "warning",
    }
    foldmem = Path(sys.executable).parent / "foldmem"
    params = StdioServerParameters(command=str(foldmem), args=["mcp"], env=env)
    async with Client(params, read_timeout_seconds=120) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = _data(await client.call_tool("query", {"text": "plumber appointment"}))
        bad = await client.call_tool("list_intents", {"status": "someday"})
    assert tools == TOOLS
    assert found["hits"] and all(hit["cites_events"] for hit in found["hits"])
    assert "status" in _error(bad)


async def test_http_needs_the_token_and_then_answers(
    hub: tuple[MemoryHub, Settings], sample_dir: Path
) -> None:
    settings = app_settings(sample_dir, api_token=TOKEN)
    server = build_server(HubBackend(hub[0], settings), "alice")
    http = ApiServer(guarded_app(server, settings), "127.0.0.1", 0, lifespan="on")
    http.start()
    await http.started()
    url = f"{http.url}{MCP_PATH}"
    try:
        async with httpx2.AsyncClient(timeout=60) as anonymous:
            refused = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http_client:
            transport = streamable_http_client(url, http_client=http_client)
            async with Client(transport) as client:
                found = _data(await client.call_tool("query", {"text": "passport appointment"}))
                bad = await client.call_tool("get_node", {"node_id": ""})
    finally:
        await http.stop()
    assert refused.status_code == 401
    assert found["hits"] and all(hit["cites_events"] for hit in found["hits"])
    assert "node_id" in _error(bad)


async def test_without_a_token_http_refuses_to_add_events(hub: tuple[MemoryHub, Settings]) -> None:
    memory_hub, settings = hub
    server = build_server(HubBackend(memory_hub, settings, ingest=False), "alice")
    event = {"id": "x", "source": "note", "ts": "2026-11-22T09:00:00Z", "title": "t"}
    async with Client(server) as client:
        refused = await client.call_tool("add_events", {"events": [event]})
    assert "token" in _error(refused)


def test_over_a_running_api(sample_dir: Path) -> None:
    settings = app_settings(sample_dir, api_token=TOKEN)
    with LiveApi(settings) as api:

        async def drive() -> dict[str, Any]:
            backend = ApiBackend.connect(api.url, TOKEN)
            try:
                async with Client(build_server(backend, "alice")) as client:
                    found = _data(await client.call_tool("query", {"text": "launch plan"}))
                    intents = _data(await client.call_tool("list_intents", {"status": "all"}))
                    first = intents["items"][0]["id"]
                    opened = _data(await client.call_tool("get_node", {"node_id": first}))
                    missing = await client.call_tool("chain", {"node_id": "no-such-node"})
            finally:
                await backend.aclose()
            return {"found": found, "opened": opened, "missing": _error(missing)}

        seen = anyio.run(drive)
    assert seen["found"]["hits"] and seen["found"]["hits"][0]["cites_events"]
    assert seen["opened"]["intent"]["evidence"]
    assert "not found" in seen["missing"]


async def test_query_with_an_open_ended_period(server: MCPServer) -> None:
    since = "2026-11-15T00:00:00+00:00"
    async with Client(server) as client:
        found = _data(await client.call_tool("query", {"text": "plumber leak", "since": since}))
    events = [h for h in found["hits"] if h["kind"] == "EVENT"]
    assert events and all(h["when"] >= since[:10] for h in events)
