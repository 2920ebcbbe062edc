"""Event times an attacker or a broken exporter can send: far future, epoch integers, the past.

The wall clock is read at the edge (runner, ingest, HTTP, Kafka worker), never in the engine:
an event beyond FOLDMEM_MAX_FUTURE_DAYS is refused with the reason, and an accepted event in
the future moves the tenant's stream clock at most to the time it arrived.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from stream_app.embedded.store import Store
from tests.app.conftest import SAMPLE, app_settings, invoke, write_jsonl
from tests.app.test_api import LiveApi

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FAR_FUTURE = "9999-12-31T23:59:59+00:00"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv("FOLDMEM_DATA_DIR", str(path))
    monkeypatch.setenv("FOLDMEM_EMBEDDER", "hashing")
    monkeypatch.setenv("FOLDMEM_LOG_LEVEL", "warning")
    monkeypatch.setenv("FOLDMEM_SWEEP_INTERVAL", "0")
    return path


def note(
    event_id: str, ts: Any, title: str = "Dentist appointment for the molar"
) -> dict[str, Any]:
    return {"id": event_id, "tenant": "alice", "source": "note", "ts": ts, "title": title}


def dead_letters(data_dir: Path) -> list[dict[str, str]]:
    path = data_dir / "deadletter.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def tenant_state(data_dir: Path) -> tuple[str, dict[str, int], dict[str, str]]:
    """(stream clock, edges by kind, event states) of tenant alice."""
    with Store(data_dir / "foldmem.db", readonly=True) as store:
        memory, _ = store.load_tenant("alice", 256, vectors=False)
        edges = store.counts("alice")["edges"]
    return str(memory.meta["clock"]), edges, dict(memory.event_states)


def fold_and_sweep(data_dir: Path, stream: Path) -> str:
    code, _, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    code, out, err = invoke("sweep")
    assert code == 0, err
    return out


def sample_plus(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    events = [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    return write_jsonl(tmp_path / "stream.jsonl", [*events, *extra])


def test_one_far_future_event_neither_folds_nor_wipes_the_graph(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "reference"
    monkeypatch.setenv("FOLDMEM_DATA_DIR", str(reference))
    swept_reference = fold_and_sweep(reference, SAMPLE)

    monkeypatch.setenv("FOLDMEM_DATA_DIR", str(data_dir))
    swept = fold_and_sweep(data_dir, sample_plus(tmp_path, note("poison", FAR_FUTURE)))

    dead = dead_letters(data_dir)
    assert len(dead) == 1 and dead[0]["location"] == "event poison"
    assert "ts" in dead[0]["reason"] and "FOLDMEM_MAX_FUTURE_DAYS" in dead[0]["reason"]
    assert dead[0]["kind"] == "invalid"
    clock, edges, states = tenant_state(data_dir)
    assert "poison" not in states
    assert (clock, edges) == tenant_state(reference)[:2]
    assert swept == swept_reference
    assert edges.get("CAUSES") and edges.get("REINFORCES") and edges.get("RELATED_TO")


def test_an_integer_ts_is_refused_with_a_clear_reason(data_dir: Path, tmp_path: Path) -> None:
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [note("epoch", 12345), note("epoch-text", "12345"), note("ok", "2026-11-03T09:00:00Z")],
    )
    code, _, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    dead = dead_letters(data_dir)
    assert [d["location"] for d in dead] == ["s.jsonl:line 1", "s.jsonl:line 2"]
    for record in dead:
        assert record["reason"].startswith("ts:") and "ISO 8601" in record["reason"]
    assert set(tenant_state(data_dir)[2]) == {"ok"}


def test_past_events_are_folded_and_leave_the_clock_alone(data_dir: Path, tmp_path: Path) -> None:
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [note("recent", "2026-11-03T09:00:00Z"), note("old", "1999-05-01T09:00:00Z", "Old diary")],
    )
    code, _, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    clock, _, states = tenant_state(data_dir)
    assert states == {"recent": "folded", "old": "folded"}
    assert datetime.fromisoformat(clock) == datetime(2026, 11, 3, 9, tzinfo=UTC)


def test_a_planned_event_folds_but_moves_the_clock_only_to_its_arrival(
    data_dir: Path, tmp_path: Path
) -> None:
    soon = datetime.now(UTC) + timedelta(days=40)
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [note("past", "2026-11-03T09:00:00Z"), note("meeting", soon.isoformat(), "Board meeting")],
    )
    before = datetime.now(UTC)
    code, _, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    clock, _, states = tenant_state(data_dir)
    assert states["meeting"] == "folded"
    assert before <= datetime.fromisoformat(clock) <= datetime.now(UTC)


def test_the_future_limit_is_a_setting(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLDMEM_MAX_FUTURE_DAYS", "10")
    soon = datetime.now(UTC) + timedelta(days=40)
    stream = write_jsonl(tmp_path / "s.jsonl", [note("meeting", soon.isoformat())])
    code, _, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    dead = dead_letters(data_dir)
    assert len(dead) == 1 and "10 days" in dead[0]["reason"]


@pytest.fixture
def live(data_dir: Path) -> Iterator[httpx.Client]:
    settings = app_settings(data_dir, api_token=TOKEN)
    with LiveApi(settings) as api, httpx.Client(base_url=api.url, timeout=60) as client:
        yield client


def test_http_ingest_refuses_far_future_and_integer_times(live: httpx.Client) -> None:
    batch = [
        note("ok", "2026-11-03T09:00:00Z"),
        note("poison", FAR_FUTURE),
        note("epoch", 12345),
        {**note("late", "2026-11-04T09:00:00Z"), "received_at": FAR_FUTURE},
    ]
    response = live.post("/tenants/alice/events", json=batch, headers=AUTH)
    assert response.status_code == 207, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["folded", "rejected", "rejected", "rejected"]
    assert [r["code"] for r in results] == [200, 422, 422, 422]
    poison, epoch, late = (r["errors"][0] for r in results[1:])
    assert poison["field"] == "ts" and "in the future" in poison["message"]
    assert epoch["field"] == "ts" and "ISO 8601" in epoch["message"]
    assert late["field"] == "received_at"
    tenants = live.get("/tenants", headers=AUTH).json()
    assert tenants[0]["clock"].startswith("2026-11-03")


def test_ingest_refuses_far_future_events_once(data_dir: Path, tmp_path: Path) -> None:
    stream = write_jsonl(
        tmp_path / "s.jsonl", [note("ok", "2026-11-03T09:00:00Z"), note("poison", FAR_FUTURE)]
    )
    code, _, err = invoke("ingest", "--to", "embedded", str(stream))
    assert code == 0, err
    assert "bad 1" in err
    dead = dead_letters(data_dir)
    assert [d["location"] for d in dead] == ["event poison"]
    assert set(tenant_state(data_dir)[2]) == {"ok"}
    code, _, err = invoke("ingest", "--to", "embedded", "--restart", str(stream))
    assert code == 0 and "reported before" in err
    assert len(dead_letters(data_dir)) == 1


def test_the_kafka_worker_admits_against_the_broker_timestamp() -> None:
    from schemas.events import RawEvent
    from stream_app.ingest.admission import Admission, EventTimeError

    admission = Admission.of(730)
    broker = datetime(2026, 11, 20, tzinfo=UTC)
    meeting = RawEvent(
        id="m", tenant="alice", source="calendar", ts=broker + timedelta(days=30), title="Board"
    )
    assert admission.admit(meeting, broker).received_at == broker
    with pytest.raises(EventTimeError) as refused:
        admission.admit(meeting.model_copy(update={"ts": broker + timedelta(days=731)}), broker)
    assert refused.value.field == "ts"
