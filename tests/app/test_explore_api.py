"""The explorer's routes and page over real HTTP on the folded sample stream."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TOKEN = "explore-secret"


def _get(client: httpx.Client, path: str, **params: object) -> dict:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_board_pages_intents_by_column_with_counts(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        everything = _get(client, "/tenants/alice/explore/intents", status="all")
        assert everything["total"] >= 3
        pending = _get(client, "/tenants/alice/explore/intents", status="pending", limit=2)
        assert pending["total"] == everything["counts"]["pending"]
        assert len(pending["items"]) == min(2, pending["total"])
        more = _get(client, "/tenants/alice/explore/intents", status="pending", offset=2)
        assert not {i["id"] for i in pending["items"]} & {i["id"] for i in more["items"]}
        card = everything["items"][0]
        assert card["title"] and card["why"].startswith("This came up because")
        one_category = _get(
            client, "/tenants/alice/explore/intents", category=everything["categories"][0]
        )
        assert 0 < one_category["total"] <= everything["total"]
        assert client.get("/tenants/alice/explore/intents?status=nonsense").status_code == 422


def test_intent_detail_opens_its_evidence_and_concepts(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        card = _get(client, "/tenants/alice/explore/intents")["items"][0]
        detail = _get(client, f"/tenants/alice/explore/intents/{card['id']}")
        assert detail["why"] == card["why"]
        cited = set(detail["intent"]["evidence_event_ids"])
        shown = {e["source_event_id"] for e in detail["evidence"]}
        assert shown and shown <= cited
        assert all(e["kind"] == "EVENT" and e["title"] for e in detail["evidence"])
        assert [c["title"] for c in detail["concepts"]] == detail["intent"]["supporting_labels"]
        missing = client.get("/tenants/alice/explore/intents/no-such-intent")
        assert missing.status_code == 404


def test_neighbourhood_is_bounded_and_says_what_it_left_out(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        concepts = _get(client, "/tenants/alice/explore/nodes", kind="CONCEPT", limit=50)
        hub_id = concepts["items"][0]["id"]
        busiest = max(
            (
                _get(client, f"/tenants/alice/explore/nodes/{c['id']}/neighbourhood", limit=200)
                for c in concepts["items"]
            ),
            key=lambda n: n["degree"],
        )
        hub_id = busiest["node"]["id"]
        small = _get(client, f"/tenants/alice/explore/nodes/{hub_id}/neighbourhood", limit=3)
        assert len(small["neighbours"]) == 3 and small["truncated"]
        drawn = {n["id"] for n in small["neighbours"]} | {hub_id}
        assert small["edges"] and all(
            e["src"] in drawn and e["dst"] in drawn for e in small["edges"]
        )
        events = _get(
            client,
            f"/tenants/alice/explore/nodes/{hub_id}/neighbourhood",
            kind="EVENT",
            limit=200,
        )
        assert events["neighbours"] and {n["kind"] for n in events["neighbours"]} == {"EVENT"}


def test_chain_of_a_revised_belief_reads_oldest_first(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        newest = _get(client, "/tenants/alice/explore/nodes", kind="FACT", chained="true")
        assert newest["total"] >= 1
        head = newest["items"][0]
        links = _get(client, f"/tenants/alice/explore/nodes/{head['id']}/chain")["links"]
        assert len(links) >= 2
        assert links[-1]["id"] == head["id"] and links[-1]["current"]
        assert not any(link["current"] for link in links[:-1])
        froms = [link["valid_from"] or link["ts"] for link in links]
        assert froms == sorted(froms)


def test_page_is_served_without_token_and_its_calls_need_one(sample_dir: Path) -> None:
    settings = app_settings(sample_dir, api_token=TOKEN)
    with LiveApi(settings) as api, httpx.Client(base_url=api.url) as client:
        page = client.get("/ui/")
        assert page.status_code == 200 and "foldmem" in page.text
        assert client.get("/ui/app.js").status_code == 200
        assert client.get("/ui", follow_redirects=False).status_code in (307, 308)
        assert client.get("/tenants/alice/explore/intents").status_code == 401
        assert client.get("/uix").status_code == 401  # a prefix, not a path that starts alike
        authorized = client.get(
            "/tenants/alice/explore/intents", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert authorized.status_code == 200


def test_cited_event_ids_resolve_to_their_events(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        query = client.post("/tenants/alice/query", json={"text": "plumber", "k": 3}).json()
        cited = query["items"][0]["event_ids"]
        found = _get(client, "/tenants/alice/explore/events", ids=[*cited, "no-such-event"])
    assert {e["source_event_id"] for e in found["events"]} == set(cited)
    assert all(e["title"] and e["ts"] for e in found["events"])


def test_a_crowded_neighbourhood_keeps_every_kind_of_link(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        intent = _get(client, "/tenants/alice/explore/intents")["items"][0]
        path = f"/tenants/alice/explore/nodes/{intent['id']}/neighbourhood"
        whole = _get(client, path, limit=200)
        few = _get(client, path, limit=4)
    kinds_in_all = {e["kind"] for e in whole["edges"]}
    assert len(kinds_in_all) >= 2 and "TRIGGERS" in kinds_in_all
    assert len(few["neighbours"]) == 4
    assert {e["kind"] for e in few["edges"]} >= {"TRIGGERS"}


def test_the_tenant_picker_counts_nodes_and_open_intents(sample_dir: Path) -> None:
    with LiveApi(app_settings(sample_dir)) as api, httpx.Client(base_url=api.url) as client:
        picked = client.get("/explore/tenants").json()
        full = client.get("/tenants").json()
    assert [(t["tenant"], t["nodes"], t["open_intents"]) for t in picked] == [
        (t["tenant"], t["nodes"], t["open_intents"]) for t in full
    ]
