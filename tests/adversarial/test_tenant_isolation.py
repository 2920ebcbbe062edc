"""Tenant isolation through the API: one tenant's ids, queries and deletions never reach
another tenant's memory (README "What is guaranteed")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TOKEN = "isolation-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def api(sample_dir: Path) -> Iterator[httpx.Client]:
    settings = app_settings(sample_dir, api_token=TOKEN)
    with LiveApi(settings) as live, httpx.Client(base_url=live.url, headers=AUTH) as client:
        yield client


def test_another_tenant_cannot_read_or_delete_alices_memory(api: httpx.Client) -> None:
    event = {
        "id": "bob-1",
        "source": "note",
        "ts": "2026-11-20T10:00:00Z",
        "title": "Passport renewal",
        "body": "Renew the passport before the flight.",
    }
    assert api.post("/tenants/bob/events", json=event).status_code == 200
    spoofed = {**event, "id": "bob-2", "tenant": "alice"}
    assert api.post("/tenants/bob/events", json=spoofed).json()["rejected"] == 1

    alice_intents = api.get("/tenants/alice/intents").json()
    alice_before = api.get("/tenants/alice/graph").json()
    intent_id = alice_intents[0]["id"]
    assert api.get(f"/tenants/bob/nodes/{intent_id}").status_code == 404
    hits = api.post("/tenants/bob/query", json={"text": "passport flight"}).json()["items"]
    assert hits and all(set(h["event_ids"]) <= {"bob-1"} for h in hits)
    cited = alice_intents[0]["evidence_event_ids"][0]
    api.delete(f"/tenants/bob/events/{cited}")
    assert api.get("/tenants/alice/graph").json()["nodes"] == alice_before["nodes"]
    assert api.post(f"/tenants/bob/intents/{intent_id}/status", json={"status": "resolve"}
                    ).status_code == 404  # fmt: skip
