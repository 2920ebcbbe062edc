"""BM25 (FTS5) index upkeep and search; reciprocal rank fusion."""

from __future__ import annotations

from read_helpers import Builder

from schemas.graph import NodeKind
from topologies.embedding import HashingEmbedder
from topologies.read.fusion import rrf
from topologies.read.lexical import LexicalIndex, terms


def test_terms_drop_stopwords_and_duplicates() -> None:
    assert terms("What is the dentist's crown, the CROWN?") == ["dentist", "crown"]


def test_build_search_and_kind_filter(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    e1 = b.event("e1", "Dentist appointment", "crown fitting for the lower molar")
    b.event("e2", "Running", "tempo run along the river")
    c1 = b.node("c_teeth", NodeKind.CONCEPT, "Dental crown treatment")
    index = LexicalIndex("alice")
    index.build(b.memory)
    assert len(index) == 3
    hits = [n for n, _ in index.search("crown", 10)]
    assert set(hits) == {e1, c1}
    assert [n for n, _ in index.search("crown", 10, kinds=[NodeKind.CONCEPT])] == [c1]
    assert index.search("zebra", 10) == []


def test_apply_follows_changesets(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    index = LexicalIndex("alice")
    index.build(b.memory)
    e1 = b.event("e1", "Passport renewal", "Bürgeramt appointment on Friday")
    for change in b.changes:
        index.apply(change)
    assert [n for n, _ in index.search("passport", 5)] == [e1]
    # an update (new text) and a removal
    c = b.node("c1", NodeKind.CONCEPT, "Travel documents")
    index.apply(b.changes[-1])
    b.memory.begin()
    b.memory.graph.update_node(c, title="Thailand trip paperwork")
    index.apply(b.memory.commit())
    assert index.search("documents", 5) == []
    assert [n for n, _ in index.search("paperwork", 5)] == [c]
    b.memory.begin()
    b.memory.graph.remove_node(e1)
    index.apply(b.memory.commit())
    assert index.search("passport", 5) == []
    assert len(index) == 1


def test_sync_by_id_difference(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    index = LexicalIndex("alice")
    index.build(b.memory)
    b.event("e1", "Plumber visit", "bathroom ceiling leak")
    assert index.sync(b.memory) == 1
    assert index.search("plumber", 3)


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = rrf({"a": [("x", 9.0), ("y", 1.0)], "b": [("y", 0.9), ("z", 0.1)]}, k=60)
    assert fused["y"] == 1 / 62 + 1 / 61
    assert fused["x"] == 1 / 61
    assert fused["z"] == 1 / 62
    assert max(fused, key=lambda n: fused[n]) == "y"  # agreement beats one first place
    weighted = rrf({"a": [("x", 1.0)], "b": [("z", 1.0)]}, {"a": 1.0, "b": 0.5}, k=60)
    assert weighted["x"] > weighted["z"]
    assert rrf({"a": [("x", 1.0)]}, {"a": 0.0}) == {}
