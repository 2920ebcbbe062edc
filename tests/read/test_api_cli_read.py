"""POST /tenants/{t}/query and /recall, and `foldmem query` / `foldmem recall`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
import pytest
from read_helpers import fold_into, hashing_settings
from typer.testing import CliRunner

from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.query import Explanation, QueryHit
from stream_app.api.app import create_app
from stream_app.cli.app import build_app
from stream_app.cli.read import hit_line
from stream_app.factory import build_hub

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
TEXTS = [
    ("Dentist", "Crown for the lower left molar is ready; appointment Thursday 10:00"),
    ("Run", "Tempo run 8 km along the Spree with Jonas"),
    ("Party", "Leonie's 40th birthday: cake, balloons and a surprise on Saturday"),
]


@pytest.fixture
def folded(tmp_path: Path) -> Path:
    events = [
        RawEvent(
            id=f"note-{i}",
            tenant="alice",
            source="note",
            ts=T0 + timedelta(hours=i),
            title=title,
            body=body,
        )
        for i, (title, body) in enumerate(TEXTS)
    ]
    return fold_into(tmp_path / "data", events)


async def test_api_query_and_recall(folded: Path) -> None:
    settings = hashing_settings(folded)
    hub = build_hub(settings, sinks=[])
    app = create_app(hub, settings)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            reply = await client.post("/tenants/alice/query", json={"text": "molar crown", "k": 3})
            assert reply.status_code == 200, reply.text
            items = reply.json()["items"]
            assert items[0]["event_ids"] == ["note-0"]
            assert {"bm25_rank", "dense_rank", "rrf", "pagerank"} <= set(items[0]["explanation"])
            missing = await client.post("/tenants/nobody/query", json={"text": "x"})
            assert missing.status_code == 404
            bad = await client.post("/tenants/alice/query", json={"k": 3})
            assert bad.status_code == 422
            cue = {"text": "Dentist\n" + TEXTS[0][1], "threshold": 0.5}
            reply = await client.post("/tenants/alice/recall", json=cue)
            assert reply.status_code == 200, reply.text
            recalled = reply.json()["items"]
            assert recalled and recalled[0]["event_ids"] == ["note-0"]
    finally:
        hub.store.close()
    # the recall history was persisted
    again = build_hub(settings, sinks=[])
    try:
        node = again.view("alice").graph.node(recalled[0]["node_id"])
        assert node.attrs["recall"]["n"] == 1
    finally:
        again.store.close()


def test_cli_query_and_recall(folded: Path) -> None:
    runner = CliRunner()
    app = build_app()
    env = {"FOLDMEM_EMBEDDER": "hashing", "FOLDMEM_LOG_LEVEL": "warning"}
    result = runner.invoke(
        app,
        [
            "query",
            "--data-dir",
            str(folded),
            "--tenant",
            "alice",
            "--k",
            "2",
            "--json",
            "birthday balloons",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    payload = orjson.loads(result.stdout)
    assert payload["items"][0]["event_ids"] == ["note-2"]
    result = runner.invoke(
        app, ["query", "--data-dir", str(folded), "--tenant", "alice", "tempo run"], env=env
    )
    assert result.exit_code == 0 and "cites: note-1" in result.stdout
    result = runner.invoke(
        app, ["query", "--data-dir", str(folded), "--tenant", "bob", "x"], env=env
    )
    assert result.exit_code == 2
    result = runner.invoke(
        app,
        [
            "recall",
            "--data-dir",
            str(folded),
            "--tenant",
            "alice",
            "--threshold",
            "0.9",
            "completely unrelated cue",
        ],
        env=env,
    )
    assert result.exit_code == 0 and "nothing recalled" in result.stdout


def test_the_cli_says_a_facts_statement_once() -> None:
    statement = "My legs are dead after yesterday's party"
    fact = QueryHit(
        node_id="f-1",
        kind=NodeKind.FACT,
        title=statement,
        text=statement,
        score=1.0,
        explanation=Explanation(),
        event_ids=["chat-0047"],
    )
    event = fact.model_copy(update={"kind": NodeKind.EVENT, "title": "Nadia Rahimi"})

    assert f"{statement} - " not in hit_line(1, fact) and statement in hit_line(1, fact)
    assert f"Nadia Rahimi - {statement}" in hit_line(2, event)
