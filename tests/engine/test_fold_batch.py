"""The batched fold: the same graph as one event at a time, raw events handed over first."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import orjson
import pytest

from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.plans import UpdatePlan
from tests.engine.fold_helpers import dump
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder, Matrix
from topologies.embedding_memo import EmbeddingMemo
from topologies.engine import INBOX_KEY, FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import ChangeSet, TenantMemory, event_node_id, merge_changes
from topologies.planner import PlanRequest

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_stream.jsonl"


def sample_events(count: int) -> list[RawEvent]:
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    return [RawEvent.model_validate(orjson.loads(line)) for line in lines[:count]]


def heuristic_engine(embedder: HashingEmbedder) -> FoldEngine:
    config = EngineConfig()
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def fold_in_batches(engine: FoldEngine, events: list[RawEvent], size: int) -> TenantMemory:
    memory = engine.new_memory("alice")
    for start in range(0, len(events), size):
        await engine.fold_batch(memory, events[start : start + size])
    return memory


def load_changes(engine: FoldEngine, changes: list[ChangeSet]) -> TenantMemory:
    """A fresh memory holding what ``changes`` persisted (as a store would reload it)."""
    (change,) = merge_changes(changes)
    memory = engine.new_memory(change.tenant)
    memory.load(
        nodes=[n for n in change.nodes.values() if n is not None],
        edges=[e for e in change.edges.values() if e is not None],
        aliases={k: v for k, v in change.aliases.items() if v is not None},
        vectors=[(name, nid, v) for (name, nid), v in change.vectors.items() if v is not None],
        meta={k: v for k, v in change.meta.items() if v is not None},
        events={k: v for k, v in change.events.items() if v is not None},
    )
    return memory


async def test_a_batch_folds_to_the_same_graph_as_one_event_at_a_time() -> None:
    events = sample_events(60)
    one_by_one = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 1)
    batched = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 16)
    assert dump(batched) == dump(one_by_one)
    assert len(batched.graph) > len(events)  # concepts, facts, TIME nodes: real work was done


async def test_batches_of_64_name_the_sample_as_one_event_at_a_time() -> None:
    """The whole sample: the same concept names and intents (titles, statuses), whole graph."""
    events = sample_events(len(SAMPLE.read_bytes().splitlines()))
    one_by_one = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 1)
    batched = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 64)
    assert intents(batched) == intents(one_by_one)
    assert names(batched, NodeKind.CONCEPT) == names(one_by_one, NodeKind.CONCEPT)
    assert dump(batched) == dump(one_by_one)
    assert len(intents(batched)) >= 4  # the sample's goals emerged


def names(memory: TenantMemory, kind: NodeKind) -> dict[str, str]:
    """Each node of ``kind`` by id: its title."""
    return {node.id: node.title for node in memory.graph.nodes() if node.kind == kind}


def intents(memory: TenantMemory) -> dict[str, tuple[str, str]]:
    """Each intent by id: its title and status."""
    graph = memory.graph
    return {i: (graph.node(i).title, str(graph.node(i).status)) for i in graph.ids(NodeKind.INTENT)}


async def test_the_batch_raw_events_are_handed_over_before_any_is_planned(
    embedder: HashingEmbedder,
) -> None:
    events = sample_events(8)
    engine = heuristic_engine(embedder)
    handed: list[ChangeSet] = []
    planned_after: list[int] = []
    plan = engine.planner.plan

    async def spying_plan(request: PlanRequest) -> UpdatePlan:
        planned_after.append(len(handed))
        return await plan(request)

    engine.planner.plan = spying_plan  # type: ignore[method-assign]
    memory = engine.new_memory("alice")
    result = await engine.fold_batch(memory, events, on_stored=handed.append)
    assert len(handed) == 1 and planned_after == [1] * len(events)
    assert [e["id"] for e in handed[0].meta[INBOX_KEY]] == [e.id for e in events]
    assert [r.status for r in result.results] == ["folded"] * len(events)
    (folded,) = result.fold_changes  # one ChangeSet to commit for the whole batch
    assert folded.events == {e.id: "folded" for e in events}
    assert folded.meta[INBOX_KEY] is None and INBOX_KEY not in memory.meta


async def test_a_crash_between_the_two_commits_folds_the_batch_as_if_none_happened(
    embedder: HashingEmbedder,
) -> None:
    """The process dies after the second batch's raw events were persisted, before its fold
    commit: the reloaded memory folds them first, to the graph of an uninterrupted run."""
    events = sample_events(30)
    reference = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 10)
    engine = heuristic_engine(embedder)
    memory = engine.new_memory("alice")
    persisted: list[ChangeSet] = []
    first = await engine.fold_batch(memory, events[:10], on_stored=persisted.append)
    persisted.extend(first.fold_changes)
    await engine.fold_batch(memory, events[10:20], on_stored=persisted.append)  # not committed
    restarted = heuristic_engine(HashingEmbedder(dim=256))
    memory = load_changes(restarted, persisted)
    assert [e.id for e in restarted.inbox(memory)] == [e.id for e in events[10:20]]
    result = await restarted.fold_batch(memory, events[20:])  # the stream goes on
    assert [r.status for r in result.recovered] == ["folded"] * 10
    assert [r.status for r in result.results] == ["folded"] * 10
    assert dump(memory) == dump(reference)
    again = await restarted.fold_batch(memory, events[10:20])  # the source sends them again
    assert {r.status for r in again.results} == {"duplicate"}


async def test_an_event_that_cannot_be_stored_does_not_stop_its_batch(
    embedder: HashingEmbedder,
) -> None:
    events = sample_events(4)
    stranger = events[1].model_copy(update={"tenant": "bob"})
    engine = heuristic_engine(embedder)
    memory = engine.new_memory("alice")
    result = await engine.fold_batch(memory, [events[0], stranger, *events[2:]])
    assert [r.status for r in result.results] == ["folded", "refused", "folded", "folded"]
    assert "bob" in (result.results[1].error or "")
    assert memory.meta["events_folded"] == 3


async def test_a_batch_embeds_its_known_texts_in_one_call(embedder: HashingEmbedder) -> None:
    engine = heuristic_engine(embedder)
    memo = engine.embedder
    assert isinstance(memo, EmbeddingMemo)
    events = sample_events(30)
    engine.prefetch(engine.new_memory("alice"), events)
    assert memo.calls == 1
    memory = engine.new_memory("alice")
    before = memo.calls
    await engine.fold_batch(memory, events)
    # texts no batch can know ahead (new concept titles, labels) still cost calls of their own
    per_event = (memo.calls - before) / len(events)
    assert per_event < 1.0
    kept = set(memo.kept())  # labels and titles stay for the next batch, not the events'
    assert not kept & set(engine.batch_texts(engine.new_memory("alice"), events))


@pytest.mark.parametrize("size", [2, 7])
async def test_duplicates_and_revisions_inside_one_batch(
    embedder: HashingEmbedder, size: int
) -> None:
    events = sample_events(6)
    revised = events[2].model_copy(update={"body": events[2].body + " Moved to Friday."})
    stream = [*events, events[1], revised]
    one_by_one = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), stream, 1)
    batched = await fold_in_batches(heuristic_engine(embedder), stream, size)
    assert dump(batched) == dump(one_by_one)
    assert any("#rev-" in eid for eid in batched.event_states)


async def test_a_fold_that_fails_leaves_its_event_stored_and_the_batch_goes_on(
    embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topologies import engine as engine_module

    events = sample_events(5)
    assemble = engine_module.assemble_context

    def broken_for_the_third(memory: TenantMemory, vector: object, node_id: str, *a: object,
                             **k: object) -> object:  # fmt: skip
        if node_id == event_node_id("alice", events[2].id):
            raise RuntimeError("a bug")
        return assemble(memory, vector, node_id, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "assemble_context", broken_for_the_third)
    engine = heuristic_engine(embedder)
    memory = engine.new_memory("alice")
    result = await engine.fold_batch(memory, events)
    assert [r.status for r in result.results] == ["folded", "folded", "failed", "folded", "folded"]
    assert "a bug" in (result.results[2].error or "")
    (change,) = result.fold_changes
    assert change.events[events[2].id] == "stored"  # committed as stored: a restart refolds it
    assert memory.pending_events() == [events[2].id]


class ThreadNotingEmbedder(HashingEmbedder):
    """A hashing embedder that notes which thread asked for which texts."""

    def __init__(self) -> None:
        super().__init__(dim=256)
        self.threads: list[tuple[int, list[str]]] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.threads.append((threading.get_ident(), list(texts)))
        return super().embed(texts)


async def test_the_next_slice_is_embedded_in_a_worker_thread_to_the_same_graph() -> None:
    events = sample_events(40)
    embedder = ThreadNotingEmbedder()
    config = EngineConfig(embed_slice=8)
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    sliced = await fold_in_batches(engine, events, 40)
    whole = await fold_in_batches(heuristic_engine(HashingEmbedder(dim=256)), events, 1)
    assert dump(sliced) == dump(whole)
    fold_thread = threading.get_ident()
    ahead = [texts for thread, texts in embedder.threads if thread != fold_thread]
    assert len(ahead) == 4  # slices 2 to 5 of 8 events, each while the one before folds
    assert all(events[8].text in texts or events[8].id in texts for texts in ahead[:1])


async def test_a_batch_smaller_than_a_slice_uses_no_thread() -> None:
    embedder = ThreadNotingEmbedder()
    engine = heuristic_engine(embedder)
    await fold_in_batches(engine, sample_events(10), 10)
    assert {thread for thread, _ in embedder.threads} == {threading.get_ident()}
