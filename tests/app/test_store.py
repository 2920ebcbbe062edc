"""The SQLite store: round trip, atomic ChangeSets, embedder guard, stale writers, outbox."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import IntentStatus, title_without_deadline
from stream_app.embedded.store import EmbedderMismatchError, StaleTenantError, Store
from stream_app.hub import Checkpoint, Hub
from stream_app.outbox.table import Outbox
from tests.app.conftest import app_settings, make_stream, quiet_hub
from topologies.embedding import HashingEmbedder
from topologies.memory import TenantMemory


def assert_same_memory(a: TenantMemory, b: TenantMemory) -> None:
    assert {n.id: n for n in a.graph.nodes()} == {n.id: n for n in b.graph.nodes()}
    assert {e.key: e for e in a.graph.edges()} == {e.key: e for e in b.graph.edges()}
    assert a.graph.aliases == b.graph.aliases
    assert a.meta == b.meta
    assert a.event_states == b.event_states
    assert set(a.indexes) == set(b.indexes)
    for name, index in a.indexes.items():
        other = b.indexes[name]
        assert sorted(index.ids()) == sorted(other.ids()), name
        for node_id in index.ids():
            va, vb = index.get(node_id), other.get(node_id)
            assert va is not None and vb is not None
            assert np.array_equal(va, vb)
        assert index.lists == other.lists, name
        for centroid in index.centroid_ids():
            assert np.array_equal(index.get(centroid), other.get(centroid)), name


async def test_round_trip_identical(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    hub, _ = quiet_hub(settings)
    for raw in make_stream(40):
        await hub.fold(RawEvent.model_validate(raw))
    live = hub.view("alice")
    assert live.graph.count() > 40
    assert live.graph.edge_count() > 0
    hub.store.close()

    with Store(settings.db_path) as store:
        store.bind_embedder("hashing-v1-256", 256)
        loaded, version = store.load_tenant("alice", 256)
        assert version > 0
        assert store.tenants() == ["alice"]
        counts = store.counts("alice")
        assert counts["events"] == {"folded": 40}
    assert_same_memory(live, loaded)


async def test_restart_folds_no_event_twice(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    events = [RawEvent.model_validate(e) for e in make_stream(12)]
    hub, _ = quiet_hub(settings)
    for event in events:
        await hub.fold(event)
    folded = hub.view("alice").meta.get("events_folded")
    hub.store.close()
    hub2, _ = quiet_hub(settings)
    for event in events:
        assert (await hub2.fold(event)).status == "duplicate"
    assert hub2.view("alice").meta.get("events_folded") == folded == 12
    hub2.store.close()


async def test_stored_event_is_refolded_after_crash(tmp_path: Path) -> None:
    """Ingest committed, fold not: recover() folds it exactly once."""
    settings = app_settings(tmp_path / "d")
    events = [RawEvent.model_validate(e) for e in make_stream(6)]
    hub, _ = quiet_hub(settings)
    for event in events[:5]:
        await hub.fold(event)
    memory = hub.view("alice")
    ingested = hub.engine.ingest(memory, events[5])
    assert ingested.changes is not None
    hub.store.apply(ingested.changes)  # the crash happens here: planning never ran
    hub.store.close()

    hub2, _ = quiet_hub(settings)
    assert hub2.view("alice").event_state(events[5].id) == "stored"
    assert await hub2.recover() == 1
    assert await hub2.recover() == 0
    memory2 = hub2.view("alice")
    assert memory2.event_state(events[5].id) == "folded"
    assert memory2.meta.get("events_folded") == 6
    hub2.store.close()


async def test_a_restart_past_the_exact_range_replays_like_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    """Indexes that switched to the inverted file reload with the persisted layout, and
    retrain later exactly as the uninterrupted run does."""
    events = [RawEvent.model_validate(e) for e in make_stream(150)]
    straight = app_settings(tmp_path / "straight", ann_min_vectors=40, ann_nprobe=2)
    hub, _ = quiet_hub(straight)
    for event in events:
        await hub.fold(event)

    broken = app_settings(tmp_path / "broken", ann_min_vectors=40, ann_nprobe=2)
    first, _ = quiet_hub(broken)
    for event in events[:50]:
        await first.fold(event)
    assert first.view("alice").indexes["EVENT"].lists == 8
    first.store.close()
    second, _ = quiet_hub(broken)
    assert second.view("alice").indexes["EVENT"].lists == 8
    for event in events[50:]:
        await second.fold(event)

    assert hub.view("alice").indexes["EVENT"].lists == 16  # retrained at 64 vectors
    assert_same_memory(hub.view("alice"), second.view("alice"))
    hub.store.close()
    second.store.close()


def test_embedder_mismatch_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.bind_embedder("hashing-v1-256", 256)
    with Store(tmp_path / "s.db") as store, pytest.raises(EmbedderMismatchError, match="hashing"):
        store.bind_embedder("all-MiniLM-L6-v2-int8-onnx", 384)


async def test_vectors_of_other_model_are_refused(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    hub, _ = quiet_hub(settings)
    await hub.fold(RawEvent.model_validate(make_stream(1)[0]))
    hub.store.close()
    with Store(settings.db_path) as store, pytest.raises(EmbedderMismatchError):
        store.load_tenant("alice", 384)


async def test_stale_writer_is_refused_then_reloads(tmp_path: Path) -> None:
    settings = app_settings(tmp_path / "d")
    events = [RawEvent.model_validate(e) for e in make_stream(4)]
    hub_a, _ = quiet_hub(settings)
    hub_b, _ = quiet_hub(settings)
    await hub_a.fold(events[0])
    memory_b = hub_b.view("alice")  # loads version after event 0
    await hub_a.fold(events[1])  # another "process" writes
    ingest = hub_b.engine.ingest(memory_b, events[2])
    assert ingest.changes is not None
    with pytest.raises(StaleTenantError):
        hub_b.store.apply(ingest.changes, expected_versions={"alice": 2})
    # through the hub, the stale memory is reloaded and the fold redone
    await hub_b.fold(events[3])
    states = hub_b.view("alice").event_states
    assert states == {events[0].id: "folded", events[1].id: "folded", events[3].id: "folded"}
    hub_a.store.close()
    hub_b.store.close()


def test_checkpoints_and_outbox(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        assert store.checkpoint("file:x") is None
        store.save_checkpoints([Checkpoint("file:x", 120, 7)])
        assert store.checkpoint("file:x") == Checkpoint("file:x", 120, 7)
        assert Outbox(store).unpublished() == []


async def test_intent_status_change_persists(sample_dir: Path) -> None:
    settings = app_settings(sample_dir)
    hub, printed = quiet_hub(settings)
    assert isinstance(hub, Hub)  # the contract the API and the CLI take
    intents = list(hub.view("alice").graph.nodes(NodeKind.INTENT))
    intent = next(i for i in intents if i.status == IntentStatus.PENDING)
    resolved = sum(i.status == IntentStatus.RESOLVED for i in intents)  # the sample decides some
    messages = await hub.set_intent_status("alice", intent.id, IntentStatus.RESOLVED, "done")
    assert messages and messages[0].type == "intent.status_changed"
    assert "pending -> resolved" in printed.getvalue()
    hub.store.close()
    with Store(settings.db_path) as store:
        assert store.intent_counts("alice").get("resolved") == resolved + 1
        assert Outbox(store).unpublished() == []
    assert '"resolved"' in settings.intents_path.read_text().splitlines()[-1]


def test_a_reloaded_store_gives_each_intent_the_vector_of_its_goal(sample_dir: Path) -> None:
    """An intent's stored vector is a function of the intent as stored (its goal, the title
    without its deadline): an index rebuilt from the stored nodes gives the same vectors."""
    settings = app_settings(sample_dir)
    embedder = HashingEmbedder(256)
    with Store(settings.db_path) as store:
        store.bind_embedder(embedder.model_id, 256)
        first, _ = store.load_tenant("alice", 256)
        again, _ = store.load_tenant("alice", 256)
    intents = list(first.graph.nodes(NodeKind.INTENT))
    assert intents
    for intent in intents:
        stored = first.index(NodeKind.INTENT).get(intent.id)
        assert stored is not None
        assert np.array_equal(stored, again.index(NodeKind.INTENT).get(intent.id))
        goal = embedder.embed([title_without_deadline(intent.title)])[0]
        assert np.allclose(stored, goal, atol=1e-6), intent.title


def test_hashing_embedder_is_what_the_tests_use() -> None:
    assert HashingEmbedder(256).model_id == "hashing-v1-256"
