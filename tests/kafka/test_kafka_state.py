"""The Kafka state table without a broker: round trip, crash mid-transaction, tombstones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from schemas.events import RawEvent
from stream_app.kafka.codec import Record, memory_items, parse_event, split_key
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import partition_for
from topologies.config import AnnConfig, EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import ChangeSet

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
TEXTS = [
    "Dentist appointment for the molar, book it this week",
    "Flux tariffs launch plan review with Farida on Tuesday",
    "Call the dentist again about the molar pain",
    "Launch plan for Flux tariffs: marketing checklist",
    "Leonie birthday gift ideas, party on Saturday",
    "Dentist confirmed Thursday 9:00 for the molar",
    "Flux tariffs launch go decision on 1 December",
    "Buy the gift for Leonie's 40th birthday",
]


class Changelog:
    """A table whose changelog sends are recorded in order (one partition per tenant)."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.sent: list[tuple[int | None, bytes, bytes | None]] = []

    def send_changelog(self, partition: int | None, key: Any, value: Any) -> None:
        self.sent.append((partition, key, value))


def replay(sent: list[tuple[int | None, bytes, bytes | None]]) -> Changelog:
    table = Changelog()
    for _, key, value in sent:
        if value is None:
            table.data.pop(key, None)
        else:
            table.data[key] = value
    return table


def engine(config: EngineConfig | None = None) -> FoldEngine:
    embedder = HashingEmbedder(dim=64)
    config = config or EngineConfig()
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


def events(tenant: str = "alice") -> list[RawEvent]:
    return [
        RawEvent(
            id=f"e{i}",
            tenant=tenant,
            source="note",
            ts=T0 + timedelta(hours=6 * i),
            title=text,
            received_at=T0 + timedelta(hours=6 * i),
        )
        for i, text in enumerate(TEXTS)
    ]


async def fold_all(eng: FoldEngine, state: KafkaTenantState, evs: list[RawEvent]) -> list[int]:
    """Fold like the worker does; returns the changelog length after each transaction."""
    marks = []
    table = state.table
    assert isinstance(table, Changelog)
    for event in evs:
        memory = state.memory(event.tenant)
        ingested = eng.ingest(memory, event)
        if ingested.changes is not None:
            state.write([ingested.changes])
            marks.append(len(table.sent))
        result = await eng.fold_stored(memory, event)
        for change in result.changes:
            state.write([change])
            marks.append(len(table.sent))
    return marks


async def test_state_round_trips_through_the_changelog() -> None:
    eng = engine()
    table = Changelog()
    state = KafkaTenantState(table, 64, partition_of=lambda t: partition_for(t, 4))
    await fold_all(eng, state, events("alice") + events("bob"))
    live = {t: memory_items(state.memory(t)) for t in ("alice", "bob")}
    rebuilt = KafkaTenantState(replay(table.sent), 64, partition_of=lambda t: partition_for(t, 4))
    assert rebuilt.tenants() == ["alice", "bob"]
    for tenant, items in live.items():
        memory = rebuilt.get(tenant)
        assert memory is not None
        assert memory_items(memory) == items
    # every record of a tenant went to that tenant's partition
    for partition, key, _ in table.sent:
        assert partition == partition_for(split_key(key)[0], 4)


async def test_the_inverted_file_layout_is_recovered_from_the_changelog() -> None:
    ann = AnnConfig(min_vectors=5, nprobe=2)
    eng = engine(EngineConfig(ann=ann))
    table = Changelog()
    state = KafkaTenantState(table, 64, partition_of=lambda _t: 0, ann=ann)
    await fold_all(eng, state, events())
    live = state.memory("alice")
    assert live.indexes["EVENT"].lists == 4
    rebuilt = KafkaTenantState(replay(table.sent), 64, partition_of=lambda _t: 0, ann=ann)
    memory = rebuilt.get("alice")
    assert memory is not None
    assert memory.indexes["EVENT"].lists == 4
    assert memory_items(memory) == memory_items(live)  # centroids included


@pytest.mark.parametrize("cut", [1, 2, 5])
async def test_a_half_written_transaction_is_rolled_back_and_repaired(cut: int) -> None:
    eng = engine()
    evs = events()
    # uninterrupted run
    full = Changelog()
    state = KafkaTenantState(full, 64, partition_of=lambda _t: 0)
    await fold_all(eng, state, evs)
    expected = memory_items(state.memory("alice"))

    # a run that crashes while the 6th event's fold transaction is on its way
    crashed = Changelog()
    state = KafkaTenantState(crashed, 64, partition_of=lambda _t: 0)
    await fold_all(eng, state, evs[:5])
    before = memory_items(state.memory("alice"))
    start = len(crashed.sent)
    memory = state.memory("alice")
    ingested = eng.ingest(memory, evs[5])
    assert ingested.changes is not None
    state.write([ingested.changes])
    after_ingest = len(crashed.sent)
    result = await eng.fold_stored(memory, evs[5])
    state.write(result.changes)
    fold_records = len(crashed.sent) - after_ingest
    assert fold_records > cut + 1
    lost = crashed.sent[: after_ingest + cut]  # the marker and the rest never arrived

    recovered = KafkaTenantState(replay(lost), 64, partition_of=lambda _t: 0)
    memory = recovered.memory("alice")
    assert 1 <= recovered.rolled_back <= cut
    assert memory.event_state("e5") == "stored"  # the raw persist survived, the fold did not
    items = memory_items(memory)
    assert start < after_ingest
    # the rolled-back state is the state after the ingest transaction
    assert {k for k in items if k[0] != "s"} >= {k for k in before if k[0] != "s"}

    # the new worker replays event 5 onwards: the final state is the uninterrupted one
    await fold_all(eng, recovered, evs[5:])
    assert memory_items(recovered.memory("alice")) == expected
    again = KafkaTenantState(replay(lost + recovered.table.sent), 64, partition_of=lambda _t: 0)  # type: ignore[attr-defined]
    final = again.get("alice")
    assert final is not None and memory_items(final) == expected
    assert again.rolled_back == 0


def test_deletions_become_tombstones_on_the_next_transaction() -> None:
    table = Changelog()
    state = KafkaTenantState(table, 64, partition_of=lambda _t: 0)
    state.write([ChangeSet("t", meta={"a": 1, "b": 2})])
    state.write([ChangeSet("t", meta={"a": None})])
    key = next(k for k in table.data if split_key(k)[2] == "a")
    assert Record.decode(table.data[key]).new is None  # a deletion record (can be rolled back)
    state.write([ChangeSet("t", meta={"b": 3})])
    assert key not in table.data
    assert (key, None) in [(k, v) for _, k, v in table.sent]


def test_parse_event_rejects_with_reasons() -> None:
    good = events()[0]
    assert parse_event(good.model_dump_json().encode(), b"alice").id == "e0"
    with pytest.raises(Exception, match="key"):
        parse_event(good.model_dump_json().encode(), b"bob")
    with pytest.raises(Exception, match="invalid RawEvent"):
        parse_event(b"{not json", b"alice")
    with pytest.raises(Exception, match="empty"):
        parse_event(None, b"alice")
