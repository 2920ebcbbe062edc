"""The per-event questions "does this embedder read spans?" and "can this planner plan
without awaiting?" answer what the runtime protocol checks answer, for every shape of
embedder and planner the engine is given."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from fold_helpers import ScriptedPlanner

from schemas.plans import UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import (
    HashingEmbedder,
    Matrix,
    Span,
    SpanEmbedder,
    SpanVectors,
    embed_with_spans,
    reads_spans,
)
from topologies.heuristic_planner import HeuristicPlanner
from topologies.planner import PlanRequest, SyncPlanner, plans_sync


class SpanReader(HashingEmbedder):
    """An embedder reading spans (``reads_spans`` as given): each span's vector is the text's."""

    def __init__(self, reads: bool) -> None:
        super().__init__(dim=8)
        self.reads = reads

    @property
    def reads_spans(self) -> bool:
        return self.reads

    def embed_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]]
    ) -> tuple[Matrix, SpanVectors]:
        matrix = self.embed(texts)
        return matrix, [[matrix[row] for _ in wanted] for row, wanted in enumerate(spans)]


class BlockedSpans(SpanReader):
    """A span reader whose ``embed_spans`` is blocked (set to None), as a protocol allows."""

    embed_spans = None  # type: ignore[assignment]


EMBEDDERS = {
    "hashing": lambda: HashingEmbedder(dim=8),
    "reading spans": lambda: SpanReader(reads=True),
    "a wrapper of one that cannot": lambda: SpanReader(reads=False),
    "embed_spans blocked": lambda: BlockedSpans(reads=True),
}


@pytest.mark.parametrize("shape", EMBEDDERS)
def test_reads_spans_answers_as_the_protocol_check(shape: str) -> None:
    embedder = EMBEDDERS[shape]()

    expected = isinstance(embedder, SpanEmbedder) and bool(embedder.reads_spans)

    assert reads_spans(embedder) is expected


def test_spans_come_from_the_text_pass_only_where_the_embedder_reads_them() -> None:
    texts, spans = ["a passport renewal"], [[(2, 10)]]

    _, read = embed_with_spans(SpanReader(reads=True), texts, spans)
    _, not_read = embed_with_spans(SpanReader(reads=False), texts, spans)

    assert read[0][0] is not None and np.isclose(np.linalg.norm(read[0][0]), 1.0)
    assert not_read == [[None]]


class AwaitingPlanner(ScriptedPlanner):
    """A planner whose ``plan_sync`` is blocked (set to None): it only plans by awaiting."""

    plan_sync = None

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        return UpdatePlan(planner=self.name)


def planners() -> dict[str, object]:
    embedder = HashingEmbedder()
    return {
        "heuristic": HeuristicPlanner(embedder, EngineConfig()),
        "scripted (async only)": ScriptedPlanner({}),
        "plan_sync blocked": AwaitingPlanner({}),
    }


@pytest.mark.parametrize("shape", list(planners()))
def test_plans_sync_answers_as_the_protocol_check(shape: str) -> None:
    planner = planners()[shape]

    assert plans_sync(planner) is isinstance(planner, SyncPlanner)  # type: ignore[arg-type]


def test_the_heuristic_planner_plans_without_awaiting_and_a_scripted_one_does_not() -> None:
    found = planners()

    assert plans_sync(found["heuristic"])  # type: ignore[arg-type]
    assert not plans_sync(found["scripted (async only)"])  # type: ignore[arg-type]
