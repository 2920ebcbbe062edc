"""What the fold remembers of the texts it embedded: the short texts its steps ask for on
demand (labels, candidate phrases, intent titles) outlive a fold, bounded; the texts of the
events it folds (their text, their statements) do not."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schemas.events import RawEvent
from tests.engine.test_fold_batch import heuristic_engine, sample_events
from topologies.embedding import Embedder, HashingEmbedder, Matrix
from topologies.embedding_memo import EmbeddingMemo


class CountingEmbedder:
    """A hashing embedder that records every call the memo makes to it."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=64)
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    def sent(self) -> list[str]:
        return [text for call in self.calls for text in call]


def test_a_label_embedded_in_one_batch_is_not_sent_to_the_model_in_the_next() -> None:
    model = CountingEmbedder()
    memo = EmbeddingMemo(model)
    first = memo.embed(["Dentist appointments"])
    memo.forget()  # the batch ends
    again = memo.embed(["Dentist appointments"])
    assert model.sent() == ["Dentist appointments"]
    assert (again == first).all()


def test_the_batch_texts_are_dropped_when_the_batch_ends() -> None:
    model = CountingEmbedder()
    memo = EmbeddingMemo(model)
    memo.prefetch(["Lunch with Alice on Friday", "Alice confirmed."])
    memo.embed_transient(["Dinner with Bob"])
    memo.forget()
    assert memo.kept() == []
    memo.embed(["Lunch with Alice on Friday"])
    assert model.sent()[-1] == "Lunch with Alice on Friday"  # asked again: embedded again


def test_a_text_of_the_batch_asked_on_demand_stays_a_batch_text() -> None:
    memo = EmbeddingMemo(CountingEmbedder())
    memo.prefetch(["Lunch with Alice on Friday"])
    memo.embed(["Lunch with Alice on Friday"])  # ingest asks for the event's text
    memo.forget()
    assert memo.kept() == []


def test_the_kept_texts_are_bounded_in_count_and_length() -> None:
    memo = EmbeddingMemo(CountingEmbedder(), kept_size=2, kept_chars=20)
    for label in ("Dentist", "Race training", "Flat viewing"):
        memo.embed([label])
    memo.embed(["a description far longer than twenty characters"])
    memo.forget()
    assert memo.kept() == ["Race training", "Flat viewing"]  # the oldest went first


def test_clear_drops_the_kept_texts_too() -> None:
    memo = EmbeddingMemo(CountingEmbedder())
    memo.embed(["Dentist"])
    memo.clear()
    assert len(memo) == 0


async def test_a_streamed_events_texts_are_embedded_in_one_call_and_not_kept() -> None:
    model = CountingEmbedder()
    engine = heuristic_engine(model)  # type: ignore[arg-type]  # an Embedder by its shape
    memory = engine.new_memory("alice")
    events = sample_events(12)
    reader = heuristic_engine(HashingEmbedder(dim=64))  # lists the statements, folds nothing
    last = max(i for i, e in enumerate(events) if reader.facts.texts(memory, [e]))
    for event in events[:last]:
        await engine.fold_batch(memory, [event])
    del model.calls[:]
    event = events[last]
    statements = reader.facts.texts(memory, [event])
    await engine.fold_batch(memory, [event])
    (call,) = [c for c in model.calls if _text(event) in c]
    assert set(statements) <= set(call)  # the event's text and statements: one call
    kept = engine.embedder.kept()
    assert _text(event) not in kept and not set(statements) & set(kept)


async def test_a_batch_keeps_none_of_its_events_texts(embedder: HashingEmbedder) -> None:
    engine = heuristic_engine(embedder)
    memory = engine.new_memory("alice")
    events = sample_events(20)
    await engine.fold_batch(memory, events)
    kept = set(engine.embedder.kept())
    assert kept  # labels and titles stay for the next batch
    texts = engine.batch_texts(engine.new_memory("alice"), events)
    assert not kept & set(texts)


async def test_an_event_refolded_after_a_crash_keeps_none_of_its_texts(
    embedder: HashingEmbedder,
) -> None:
    """A stored, unfolded event (what recovery refolds) is folded without the batch's
    prefetch: its text and statements are still the fold's own, not kept."""
    engine = heuristic_engine(embedder)
    memory = engine.new_memory("alice")
    events = sample_events(12)
    reader = heuristic_engine(HashingEmbedder(dim=64))
    last = max(i for i, e in enumerate(events) if reader.facts.texts(memory, [e]))
    for event in events[:last]:
        await engine.fold_batch(memory, [event])
    event = events[last]
    statements = reader.facts.texts(memory, [event])
    engine.ingest(memory, event)  # stored, then the process died before the fold
    engine.embedder.forget()

    await engine.fold(memory, event)

    kept = set(engine.embedder.kept())
    assert statements and not set(statements) & kept
    assert _text(event) not in kept


def _text(event: RawEvent) -> str:
    return event.text or event.id


@pytest.fixture
def minilm_model(minilm: Embedder) -> Embedder:
    """The MiniLM model itself, without the test session's vector cache."""
    inner = getattr(minilm, "inner", minilm)
    assert not hasattr(inner, "inner")
    return inner


def test_a_batched_call_returns_the_vectors_of_single_calls(minilm_model: Embedder) -> None:
    """The memo answers a text with the vector of whichever call embedded it: ONNX pads a
    batch to its longest text, and the mean pooling over real tokens makes the padding
    irrelevant."""
    texts = [
        "Dentist",
        "Book the flat viewing for Saturday morning",
        "Follow the race training plan (by 23 Jan)\nThis came up because 6 events point to "
        'the same goal. It started with "Call the coach" (5 Jan), then "Intervals at the '
        'track" (6 Jan); the latest is "Long run on Sunday" (7 Jan).\nDue by 23 Jan 2026.',
        "Alice confirmed lunch on Friday.",
    ]
    batched = minilm_model.embed(texts)
    for row, text in zip(batched, texts, strict=True):
        single = minilm_model.embed([text])[0]
        assert abs(row - single).max() < 1e-6
