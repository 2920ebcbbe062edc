"""`foldmem status` and GET /llm say which planner folded each tenant's events, from the data
dir (issue 13: status reported the planner of the reading process's environment)."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson

from foldmem_testing.fakeserver import FakeOpenAI, Reply
from stream_app.api.app import create_app
from stream_app.api.server import ApiServer
from tests.app.conftest import app_settings, invoke, make_stream, quiet_hub, run_once, write_jsonl
from topologies.config import EngineConfig


async def test_status_reports_the_planners_of_the_data_dir_not_of_the_environment(
    data_dir: Path, tmp_path: Path
) -> None:
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(6))
    async with FakeOpenAI() as model:
        model.push(Reply(status=500), Reply(content='{"ops": []}'))  # error, then empty
        settings = app_settings(
            data_dir,
            planner="llm",
            llm_base_url=model.base_url,
            llm_model="fake",
            llm_server="hosted",
            llm_max_retries=0,
        )
        stats = await run_once(settings, stream)
    assert stats.folded == 6
    # this process has no LLM settings: the report comes from the data dir
    code, out, _ = invoke("status", "--json")
    assert code == 0
    report = orjson.loads(out)
    assert report["planner"].startswith("heuristic")  # what `run` would use now
    folded_by = report["tenants"]["alice"]["folded_by"]
    planners = folded_by["planners"]
    assert sum(planners.values()) == 6 and planners["llm"] >= 1
    assert planners["heuristic"] >= 2  # the two fallbacks (a duplicate may add one)
    assert folded_by["llm_fallbacks"] == {"error": 1, "empty": 1}
    assert folded_by["uncounted"] == 0
    code, out, _ = invoke("status")
    assert "folded by: " in out and "(llm fallbacks: empty 1, error 1)" in out


async def test_the_llm_route_reports_who_folded_each_tenant(tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(3))
    settings = app_settings(tmp_path / "data", api_token="t0ken")
    await run_once(settings, stream)
    hub, _ = quiet_hub(settings)
    server = ApiServer(create_app(hub, settings), "127.0.0.1", 0)
    server.start()
    await server.started()
    try:
        async with httpx.AsyncClient(base_url=server.url) as client:
            answer = await client.get("/llm", headers={"Authorization": "Bearer t0ken"})
    finally:
        await server.stop()
        hub.store.close()
    assert answer.status_code == 200
    body = answer.json()
    assert body["enabled"] is False
    assert body["folded_by"]["alice"] == {
        "planners": {"heuristic": 3},
        "llm_fallbacks": {},
        "uncounted": 0,
    }


def test_a_hub_without_a_store_reports_from_the_tenant_state() -> None:
    """The Kafka worker's hub has no SQLite store: the counts come from the tenant's state."""
    from stream_app.hub.views import folded_by
    from topologies.embedding import HashingEmbedder
    from topologies.engine import FoldEngine
    from topologies.heuristic_planner import HeuristicPlanner
    from topologies.planner import PLANNED_BY_KEY

    embedder = HashingEmbedder(dim=64)
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, EngineConfig()))
    memory = engine.new_memory("alice")
    memory.meta[PLANNED_BY_KEY] = {"heuristic": 2}
    memory.event_states.update({"a": "folded", "b": "folded", "c": "folded", "d": "stored"})
    assert folded_by(memory, engine.planner) == {
        "planners": {"heuristic": 2},
        "llm_fallbacks": {},
        "uncounted": 1,
    }
