"""A statement the fact step reads from an event is a sentence of the event's text: with
MiniLM it is embedded from the text's own model pass (late chunking), so a fold makes one
model pass per event; a statement the model cannot read there is embedded on its own, as
every statement is with the setting off or with an embedder that cannot (hashing)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schemas.events import RawEvent
from tests.engine.test_fold_batch import sample_events
from topologies.config import EngineConfig
from topologies.embedding import (
    Embedder,
    HashingEmbedder,
    Matrix,
    MiniLmOnnxEmbedder,
    Span,
    SpanVectors,
    embed_with_spans,
    locate,
)
from topologies.embedding_memo import EmbeddingMemo, Passage
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner

MAIL = (
    "Passport renewal\n"
    "Checked my passport after reading the booking: it expires on 11 March 2027. "
    "Regular processing at the Bürgeramt is 3-4 weeks, so book an appointment now."
)
FIRST = "Checked my passport after reading the booking: it expires on 11 March 2027."
SECOND = "Regular processing at the Bürgeramt is 3-4 weeks, so book an appointment now."


class RecordingEmbedder:
    """Wraps MiniLM and records the texts sent to the model, call by call."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def reads_spans(self) -> bool:
        return True

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    def embed_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]]
    ) -> tuple[Matrix, SpanVectors]:
        self.calls.append(list(texts))
        return embed_with_spans(self.inner, texts, spans)

    def sent(self) -> list[str]:
        return [text for call in self.calls for text in call]


def engine_of(embedder: Embedder, in_context: bool = True) -> FoldEngine:
    config = EngineConfig(statements_in_context=in_context)
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


def with_statements(events: list[RawEvent], engine: FoldEngine) -> RawEvent:
    memory = engine.new_memory("alice")
    return next(e for e in events if len(engine.facts.statements(memory, e)) >= 2)


async def test_a_folded_events_statements_cost_no_model_pass_of_their_own(
    minilm: Embedder,
) -> None:
    model = RecordingEmbedder(minilm)
    engine = engine_of(model)  # type: ignore[arg-type]  # an Embedder by its shape
    event = with_statements(sample_events(12), engine)
    statements = engine.facts.statements(engine.new_memory("alice"), event)

    await engine.fold_batch(engine.new_memory("alice"), [event])

    assert (event.text or event.id) in model.sent()
    assert not set(statements) & set(model.sent())


async def test_with_the_setting_off_each_statement_is_embedded_on_its_own(
    minilm: Embedder,
) -> None:
    model = RecordingEmbedder(minilm)
    engine = engine_of(model, in_context=False)  # type: ignore[arg-type]  # by its shape
    event = with_statements(sample_events(12), engine)
    statements = engine.facts.statements(engine.new_memory("alice"), event)

    await engine.fold_batch(engine.new_memory("alice"), [event])

    assert set(statements) <= set(model.sent())


def test_a_statement_read_in_its_text_is_the_unit_mean_of_its_own_tokens(
    minilm: Embedder,
) -> None:
    memo = EmbeddingMemo(minilm)
    first, second = memo.embed_statements(MAIL, [FIRST, SECOND])
    alone = minilm.embed([FIRST])[0]

    assert np.isclose(np.linalg.norm(first), 1.0, atol=1e-5)
    assert 0.5 < float(first @ alone) < 0.999  # the same sentence, coloured by its mail
    assert float(first @ alone) > float(second @ alone)


def test_a_statement_has_the_same_vector_read_ahead_or_on_demand(minilm: Embedder) -> None:
    ahead = EmbeddingMemo(minilm)
    ahead.prefetch([Passage(MAIL, (FIRST, SECOND))])
    on_demand = EmbeddingMemo(minilm)

    assert np.allclose(
        ahead.embed_statements(MAIL, [SECOND]),
        on_demand.embed_statements(MAIL, [SECOND]),
        atol=1e-5,
    )


def test_one_sentence_in_two_mails_is_read_in_each_mails_context(minilm: Embedder) -> None:
    other = f"Holiday plans\nWe fly to Bangkok on 19 Dec. {FIRST}"
    memo = EmbeddingMemo(minilm)
    memo.prefetch([Passage(MAIL, (FIRST,)), Passage(other, (FIRST,))])

    in_mail, in_other = (
        memo.embed_statements(MAIL, [FIRST])[0],
        memo.embed_statements(other, [FIRST])[0],
    )

    assert float(in_mail @ in_other) < 0.999


def test_a_statement_the_models_truncation_cut_is_embedded_on_its_own() -> None:
    short = MiniLmOnnxEmbedder(max_tokens=24, threads=1)
    memo = EmbeddingMemo(short)

    first, second = memo.embed_statements(MAIL, [FIRST, SECOND])

    assert np.allclose(second, short.embed([SECOND])[0], atol=1e-5)  # past token 24
    assert not np.allclose(first, short.embed([FIRST])[0], atol=1e-3)  # within: read in MAIL


def test_a_statement_that_is_not_a_span_of_its_text_is_embedded_on_its_own(
    minilm: Embedder,
) -> None:
    reworded = "The passport expires on 11 March 2027."
    assert locate(MAIL, reworded) is None

    (vector,) = EmbeddingMemo(minilm).embed_statements(MAIL, [reworded])

    assert np.allclose(vector, minilm.embed([reworded])[0], atol=1e-5)


def test_an_embedder_that_cannot_read_spans_embeds_statements_as_before() -> None:
    hashing = HashingEmbedder(dim=64)

    vectors = EmbeddingMemo(hashing).embed_statements(MAIL, [FIRST, SECOND])

    assert np.allclose(vectors, hashing.embed([FIRST, SECOND]))


def test_minilm_embeds_a_text_alike_with_or_without_spans(minilm: Embedder) -> None:
    model = MiniLmOnnxEmbedder(threads=1)
    spans = [[s for s in (locate(MAIL, FIRST), locate(MAIL, SECOND)) if s]]

    with_spans, _ = model.embed_spans([MAIL], spans)

    assert np.allclose(with_spans, minilm.embed([MAIL]), atol=1e-5)
