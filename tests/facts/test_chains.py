"""DCPM System 1: reconcile ADD / SUPERSEDE / UPDATE / duplicate; the five-revision chain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.query import QueryRequest
from tests.facts.helpers import REVISIONS, T0, engine, stance_stream
from topologies.embedding import HashingEmbedder
from topologies.facts.chains import chain_of, head_of
from topologies.facts.step import fact_id
from topologies.memory import event_node_id
from topologies.privacy import set_layers

PRIVACY_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)


async def _folded(embedder: HashingEmbedder, heuristic: bool = True):  # type: ignore[no-untyped-def]
    eng = engine(embedder, heuristic)
    memory = eng.new_memory("alice")
    for event in stance_stream():
        await eng.fold(memory, event)
    return eng, memory


def _stance_facts(memory):  # type: ignore[no-untyped-def]
    return [f for f in memory.graph.nodes(NodeKind.FACT) if f.attrs.get("key") == "stance:fitness"]


async def test_five_revisions_make_one_chain_of_five(embedder: HashingEmbedder) -> None:
    _, memory = await _folded(embedder)
    facts = _stance_facts(memory)
    assert len(facts) == 5
    middle = fact_id("alice", "stance-2", 0)
    arc = chain_of(memory, middle)
    assert [n.text for n in arc] == REVISIONS
    for older, newer in pairwise(arc):
        assert newer.supersedes == older.id and older.superseded_by == newer.id
        assert memory.graph.edge(newer.id, older.id, EdgeKind.SUPERSEDES) is not None
        assert older.valid_to == newer.valid_from
        assert (
            memory.graph.edge(
                newer.id, event_node_id("alice", newer.source_event_id or ""), EdgeKind.DERIVED_FROM
            )
            is not None
        )
    assert arc[-1].valid_to is None and arc[-1].superseded_by is None
    assert head_of(memory, arc[0].id).id == arc[-1].id


async def test_query_matching_only_the_middle_returns_the_whole_arc(
    embedder: HashingEmbedder,
) -> None:
    from topologies.read import Reader

    _, memory = await _folded(embedder)
    reader = Reader(embedder)
    response = reader.query(memory, QueryRequest(text="birthday treat", k=5, kinds=[NodeKind.FACT]))
    top = response.items[0]
    assert "birthday treat" in top.text  # only the middle revision says this
    assert top.chain is not None
    assert [link.text for link in top.chain] == REVISIONS
    assert [link.current for link in top.chain] == [False, False, False, False, True]


async def test_chain_walk_is_linear_in_chain_length(embedder: HashingEmbedder) -> None:
    _, memory = await _folded(embedder, heuristic=False)
    calls = 0
    real_get = memory.graph.get

    def counting_get(node_id: str):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real_get(node_id)

    memory.graph.get = counting_get  # type: ignore[method-assign]
    chain_of(memory, fact_id("alice", "stance-2", 0))
    assert calls <= 2 * 5 + 2


async def test_update_and_duplicate(embedder: HashingEmbedder) -> None:
    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("bob")

    def ev(i: int, body: str) -> RawEvent:
        return RawEvent(
            id=f"e{i}", tenant="bob", source="chat", ts=T0 + timedelta(days=i), body=body
        )

    await eng.fold(memory, ev(1, "I live in Porto."))
    await eng.fold(memory, ev(2, "I live in Porto."))  # exact duplicate: nothing written
    assert memory.graph.count(NodeKind.FACT) == 1
    await eng.fold(memory, ev(3, "I live in Porto, near the river."))  # same value: UPDATE
    facts = list(memory.graph.nodes(NodeKind.FACT))
    assert len(facts) == 1 and facts[0].reinforcement == 1
    assert "river" in facts[0].text
    assert memory.graph.edge(event_node_id("bob", "e3"), facts[0].id, EdgeKind.GROUNDS)
    await eng.fold(memory, ev(4, "I moved to Berlin last month."))  # new value: SUPERSEDE
    facts = sorted(memory.graph.nodes(NodeKind.FACT), key=lambda n: n.created_at)
    assert len(facts) == 2 and facts[1].supersedes == facts[0].id
    await eng.fold(memory, ev(5, "The tram strike delayed every line in the city centre today."))
    assert memory.graph.count(NodeKind.FACT) == 3  # unrelated: ADD


async def test_facts_layer_opt_out(embedder: HashingEmbedder) -> None:
    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("carol")
    set_layers(memory, {"facts": False}, now=PRIVACY_NOW)
    for event in stance_stream("carol"):
        await eng.fold(memory, event)
    assert memory.graph.count(NodeKind.FACT) == 0


async def test_replay_is_idempotent(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder, heuristic=False)
    before = memory.graph.count(NodeKind.FACT)
    for event in stance_stream():
        result = await eng.fold(memory, event)
        assert result.status == "duplicate"
    assert memory.graph.count(NodeKind.FACT) == before


@pytest.mark.parametrize("layer", ["facts"])
def test_layer_default_on(layer: str, embedder: HashingEmbedder) -> None:
    from topologies.privacy import layer_enabled

    assert layer_enabled(engine(embedder).new_memory("x"), layer)
