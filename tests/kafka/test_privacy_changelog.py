"""Kafka state recovery after a hard delete or a forget (no broker: the changelog is recorded
from the state's sends and replayed like Faust's recovery)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from schemas.graph import NodeKind
from stream_app.kafka.state import KafkaTenantState
from tests.facts.helpers import REVISIONS, engine, stance_stream
from topologies.embedding import HashingEmbedder
from topologies.privacy import delete_event, forget_tenant

NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)

SECRET = "birthday treat"


class Sent(NamedTuple):
    key: bytes
    value: bytes | None


class RecordingTable:
    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.log: list[Sent] = []

    def send_changelog(self, partition: int | None, key: Any, value: Any) -> None:
        self.log.append(Sent(key, value))


def replay(log: list[Sent]) -> KafkaTenantState:
    table = RecordingTable()
    for record in log:  # last value per key wins, a None value is a tombstone
        if record.value is None:
            table.data.pop(record.key, None)
        else:
            table.data[record.key] = record.value
    return KafkaTenantState(table, 256, partition_of=lambda _t: 0)


async def _state_with_stream() -> tuple[RecordingTable, KafkaTenantState]:
    embedder = HashingEmbedder(256)
    eng = engine(embedder)
    table = RecordingTable()
    state = KafkaTenantState(table, 256, partition_of=lambda _t: 0)
    memory = state.memory("alice")
    for event in stance_stream():
        result = await eng.fold(memory, event)
        state.write(result.changes)
    return table, state


def _live(state: KafkaTenantState) -> str:
    memory = state.get("alice")
    assert memory is not None
    return orjson.dumps([n.model_dump(mode="json") for n in memory.graph.nodes()]).decode()


async def test_recovery_after_hard_delete() -> None:
    table, state = await _state_with_stream()
    assert SECRET in _live(replay(table.log))
    report = delete_event(
        state.memory("alice"), "stance-3", actor="me", now=NOW, embedder=HashingEmbedder(256)
    )
    assert report.changes is not None
    state.hard_delete(report.changes)
    assert report.deleted["FACT"]
    recovered = replay(table.log)
    assert SECRET not in _live(recovered)
    memory = recovered.get("alice")
    assert memory is not None and memory.graph.count(NodeKind.FACT) >= 4
    # no live table value carries the deleted text: deletion records became tombstones
    assert all(SECRET.encode() not in v for v in table.data.values())
    assert all(SECRET.encode() not in v for v in recovered.table.data.values())


async def test_recovery_after_forget_tenant() -> None:
    table, state = await _state_with_stream()
    report = forget_tenant(state.memory("alice"), actor="me", now=NOW)
    assert report.changes is not None
    state.hard_delete(report.changes)
    recovered = replay(table.log)
    memory = recovered.get("alice")
    assert memory is not None and len(memory.graph) == 0
    live = b"".join(recovered.table.data.values())
    assert all(text.encode() not in live for text in REVISIONS)
