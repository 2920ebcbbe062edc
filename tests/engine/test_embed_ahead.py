"""The next batch embedded ahead: while a tenant's batch folds, the texts of its next batch are
embedded in the memo's worker thread, and the next batch finds their vectors. Same vectors,
same graph; an embedding that fails ahead is left to the batch it belongs to."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from schemas.events import RawEvent
from schemas.graph import NodeKind
from tests.engine.fold_helpers import dump
from tests.engine.test_fold_batch import heuristic_engine, sample_events
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder, Matrix
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import ChangeSet, TenantMemory


class ThreadNotingEmbedder(HashingEmbedder):
    """A hashing embedder that notes which thread asked for which texts, and fails for
    texts holding ``fail_on`` (a model that cannot read them)."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__(dim=256)
        self.calls: list[tuple[int, list[str]]] = []
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append((threading.get_ident(), list(texts)))
        if self.fail_on is not None and any(self.fail_on in text for text in texts):
            raise RuntimeError("the model cannot read this text")
        return super().embed(texts)

    def texts_on(self, thread: int, *, other: bool = False) -> set[str]:
        return {t for ident, texts in self.calls if (ident != thread) == other for t in texts}


def engine_of(embedder: HashingEmbedder, ahead: bool = True) -> FoldEngine:
    config = EngineConfig(embed_ahead=ahead)
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def fold_ahead(
    engine: FoldEngine, events: list[RawEvent], size: int, memory: TenantMemory | None = None
) -> TenantMemory:
    """Fold in batches of ``size``, each told the next one (as the ingest driver does)."""
    memory = memory or engine.new_memory("alice")
    for start in range(0, len(events), size):
        stop = start + size
        await engine.fold_batch(memory, events[start:stop], ahead=events[stop : stop + size])
    return memory


async def test_the_next_batch_is_embedded_in_a_worker_thread_to_the_same_graph() -> None:
    events = sample_events(60)
    embedder = ThreadNotingEmbedder()
    ahead = await fold_ahead(engine_of(embedder), events, 10)
    alone = await fold_ahead(engine_of(HashingEmbedder(dim=256), ahead=False), events, 10)
    assert dump(ahead) == dump(alone)
    fold_thread = threading.get_ident()
    worker = embedder.texts_on(fold_thread, other=True)
    later = {event.text for event in events[10:]}
    assert later <= worker  # every later batch's event texts were embedded ahead
    assert not later & embedder.texts_on(fold_thread)  # and none again on the fold's thread
    assert not {event.text for event in events[:10]} & worker  # the first batch: no one before


async def test_with_embed_ahead_off_each_batch_embeds_its_own_texts() -> None:
    embedder = ThreadNotingEmbedder()
    await fold_ahead(engine_of(embedder, ahead=False), sample_events(30), 10)
    assert {thread for thread, _ in embedder.calls} == {threading.get_ident()}


async def test_a_batch_of_one_embeds_the_next_one_ahead_too() -> None:
    events = sample_events(6)
    embedder = ThreadNotingEmbedder()
    memory = await fold_ahead(engine_of(embedder), events, 1)
    alone = await fold_ahead(engine_of(HashingEmbedder(dim=256), ahead=False), events, 1)
    assert dump(memory) == dump(alone)
    assert {e.text for e in events[1:]} <= embedder.texts_on(threading.get_ident(), other=True)


async def test_an_embedding_error_fails_the_batch_it_belongs_to_with_its_events_stored() -> None:
    events = sample_events(20)
    marker = events[15].title
    engine = engine_of(ThreadNotingEmbedder(fail_on=marker))
    memory = engine.new_memory("alice")
    first = await engine.fold_batch(memory, events[:10], ahead=events[10:])
    assert {r.status for r in first.results} == {"folded"}  # the next batch's error is not its
    stored: list[ChangeSet] = []
    with pytest.raises(RuntimeError, match="cannot read"):
        await engine.fold_batch(memory, events[10:], on_stored=stored.append)
    (inbox,) = stored  # the raw events were handed over before the error: nothing is lost
    assert [raw["id"] for raw in inbox.meta["inbox"]] == [e.id for e in events[10:]]


async def test_a_failed_embedding_ahead_is_done_again_by_its_own_batch() -> None:
    events = sample_events(20)
    flaky = ThreadNotingEmbedder(fail_on=events[15].title)
    engine = engine_of(flaky)
    memory = engine.new_memory("alice")
    await engine.fold_batch(memory, events[:10], ahead=events[10:])
    flaky.fail_on = None  # the model reads it now: the batch embeds it itself
    second = await engine.fold_batch(memory, events[10:])
    assert {r.status for r in second.results} == {"folded"}
    alone = await fold_ahead(engine_of(HashingEmbedder(dim=256), ahead=False), events, 10)
    assert dump(memory) == dump(alone)


async def test_a_revision_in_the_next_slice_keeps_each_version_its_own_statements() -> None:
    events = sample_events(12)
    original = events[3]
    revised = original.model_copy(update={"body": "I moved to Hamburg in October."})
    embedder = HashingEmbedder(dim=256)
    config = EngineConfig(embed_slice=1)  # each event a slice: the next one is read ahead
    sliced = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = sliced.new_memory("alice")
    await sliced.fold_batch(memory, events[:3])
    await sliced.fold_batch(memory, [original, revised, *events[4:]])
    one_by_one = heuristic_engine(HashingEmbedder(dim=256))
    alone = one_by_one.new_memory("alice")
    for event in [*events[:3], original, revised, *events[4:]]:
        await one_by_one.fold_batch(alone, [event])
    facts = sorted(str(n.text) for n in alone.graph.nodes(NodeKind.FACT))
    assert any("Hamburg" in fact for fact in facts)
    assert sorted(str(n.text) for n in memory.graph.nodes(NodeKind.FACT)) == facts
    assert dump(memory) == dump(alone)
