"""The query path: each signal, expansion, surfacing, chains, filters, citations, no LLM."""

from __future__ import annotations

from datetime import timedelta

import pytest
from read_helpers import T0, Builder

from schemas.graph import EdgeKind, NodeKind
from schemas.query import QueryRequest, TimeRange
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.read import ReadConfig, Reader


@pytest.fixture
def world(embedder: HashingEmbedder) -> Builder:
    b = Builder(embedder)
    b.event("mail-1", "Dentist", "The crown for your molar is ready on Thursday", hours=1)
    b.event("chat-1", "Leonie", "Party planning: cake and balloons for Saturday", hours=2)
    b.event("note-1", "Molar", "cold water makes my tooth twinge again", hours=3)
    b.event("cal-1", "Run", "Tempo run 8 km along the Spree", hours=50)
    b.event("cal-2", "Insurance", "TK insurer reimbursement form for dental work", hours=60)
    b.node("c_teeth", NodeKind.CONCEPT, "Cracked molar needs a crown", hours=1)
    b.node("i_book", NodeKind.INTENT, "Book the crown appointment", hours=3)
    m1 = _eid(b, "mail-1")
    n1 = _eid(b, "note-1")
    b.edge(m1, "c_teeth", EdgeKind.GROUNDS)
    b.edge(n1, "c_teeth", EdgeKind.REINFORCES)
    b.edge("c_teeth", "i_book", EdgeKind.TRIGGERS)
    b.edge(_eid(b, "cal-2"), "c_teeth", EdgeKind.GROUNDS, w0=0.9)
    return b


def _eid(b: Builder, event_id: str) -> str:
    from topologies.memory import event_node_id

    return event_node_id(b.memory.tenant, event_id)


def _ask(b: Builder, text: str, config: ReadConfig | None = None, **kw: object):  # type: ignore[no-untyped-def]
    reader = Reader(b.embedder, EngineConfig(read=config or ReadConfig()))
    return reader.query(b.memory, QueryRequest(text=text, **kw))  # type: ignore[arg-type]


def test_bm25_signal(world: Builder) -> None:
    res = _ask(world, "twinge", mode="bm25", expand=False, surface=False)
    assert [i.node_id for i in res.items] == [_eid(world, "note-1")]
    exp = res.items[0].explanation
    assert exp.bm25_rank == 1 and exp.bm25_score and exp.dense_rank is None


def test_dense_signal(world: Builder) -> None:
    res = _ask(world, "balloons cake party", mode="dense", expand=False, surface=False, k=3)
    top = res.items[0]
    assert top.node_id == _eid(world, "chat-1")
    assert top.explanation.dense_rank == 1 and top.explanation.bm25_rank is None
    assert top.explanation.dense_cosine is not None and top.explanation.dense_cosine > 0.3


def test_hybrid_fuses_both(world: Builder) -> None:
    res = _ask(
        world,
        "molar tooth twinge",
        ReadConfig(bm25_weight=1.0, dense_weight=1.0, feedback_weight=0.0),
        expand=False,
        surface=False,
        k=3,
    )
    top = res.items[0]
    assert top.node_id == _eid(world, "note-1")
    assert top.explanation.bm25_rank == 1 and top.explanation.dense_rank == 1
    assert top.explanation.rrf == pytest.approx(2 / 61, rel=1e-4)


def test_expansion_reaches_neighbours_with_decay(world: Builder) -> None:
    cfg = ReadConfig(contiguity=False, surface_weight=0.0)
    res = _ask(world, "twinge", cfg, mode="bm25", k=10, surface=False)
    by_id = {i.node_id: i for i in res.items}
    concept = by_id["c_teeth"].explanation
    assert concept.hops == 1 and concept.via == _eid(world, "note-1")
    assert concept.expansion == pytest.approx(cfg.hop_decay * 0.8)  # REINFORCES prior 0.8
    intent = by_id["i_book"].explanation
    assert intent.hops == 2 and intent.expansion < concept.expansion
    assert intent.pagerank > 0
    # without expansion nothing but the hit comes back
    res = _ask(world, "twinge", cfg, mode="bm25", expand=False, surface=False)
    assert [i.node_id for i in res.items] == [_eid(world, "note-1")]


def test_expansion_is_bounded_to_two_hops(world: Builder) -> None:
    cfg = ReadConfig(contiguity=False, max_hops=1)
    res = _ask(world, "twinge", cfg, mode="bm25", surface=False)
    assert "i_book" not in {i.node_id for i in res.items}


def test_temporal_contiguity_links_adjacent_events(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("t1", "Caroline", "What did you paint last week?", hours=1.0, source="chat")
    b.event("t2", "Melanie", "A sunset over the lake", hours=1.01, source="chat")
    b.event("t3", "Melanie", "Unrelated later remark", hours=9.0, source="chat")
    res = _ask(b, "paint", ReadConfig(contiguity_gap_minutes=30), mode="bm25")
    ids = [i.node_id for i in res.items]
    assert ids[:2] == [_eid(b, "t1"), _eid(b, "t2")]
    assert _eid(b, "t3") not in ids  # 8 hours apart: no link


def test_surfaces_concepts_and_intents_whose_evidence_matched(world: Builder) -> None:
    cfg = ReadConfig(contiguity=False)
    res = _ask(
        world,
        "twinge molar reimbursement",
        cfg,
        mode="bm25",
        expand=False,
        kinds=[NodeKind.CONCEPT],
    )
    assert [i.node_id for i in res.items] == ["c_teeth"]
    assert res.items[0].explanation.surfaced_by == 3  # mail-1, note-1 and cal-2 matched
    assert res.items[0].explanation.surface > 0


def test_kinds_filter(world: Builder) -> None:
    res = _ask(world, "crown molar", kinds=[NodeKind.INTENT])
    assert {i.kind for i in res.items} == {NodeKind.INTENT}
    res = _ask(world, "crown molar", kinds=[NodeKind.EVENT], k=20)
    assert res.items and {i.kind for i in res.items} == {NodeKind.EVENT}


def test_event_ids_cite_grounding_events(world: Builder) -> None:
    res = _ask(world, "twinge", k=10)
    by_id = {i.node_id: i for i in res.items}
    assert by_id[_eid(world, "note-1")].event_ids == ["note-1"]
    assert set(by_id["c_teeth"].event_ids) == {"mail-1", "note-1", "cal-2"}
    assert by_id["c_teeth"].event_ids[0] == "note-1"  # the evidence that matched comes first
    # the intent is derived from the concept: its events are two evidence hops away
    assert set(by_id["i_book"].event_ids) <= {"mail-1", "note-1", "cal-2"}
    bounded = _ask(world, "twinge", k=10, max_event_ids=1)
    assert all(len(i.event_ids) <= 1 for i in bounded.items)
    # a concept cites at most surfaced_cites events, its most relevant: a summary does not
    # spend the client's budget of cited events on members that do not answer the query
    one = _ask(world, "twinge", ReadConfig(surfaced_cites=1), k=10, kinds=[NodeKind.CONCEPT])
    assert one.items[0].event_ids == ["note-1"]


def test_time_filters_on_event_time(world: Builder) -> None:
    late = T0 + timedelta(hours=55)
    res = _ask(
        world,
        "run insurer dental crown",
        k=20,
        kinds=[NodeKind.EVENT],
        as_of=T0 + timedelta(hours=10),
    )
    assert _eid(world, "cal-1") not in {i.node_id for i in res.items}
    assert _eid(world, "cal-2") not in {i.node_id for i in res.items}
    window = TimeRange(start=T0 + timedelta(hours=40), end=late)
    res = _ask(world, "run insurer dental crown", k=20, kinds=[NodeKind.EVENT], between=window)
    assert [i.node_id for i in res.items] == [_eid(world, "cal-1")]


def test_supersedes_chain_returned_whole_in_time_order(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    t = T0
    b.node(
        "f1",
        NodeKind.FACT,
        "Jonas works at Siemens",
        valid_from=t,
        valid_to=t + timedelta(days=10),
        superseded_by="f2",
    )
    b.node(
        "f2",
        NodeKind.FACT,
        "Jonas works at Zalando",
        valid_from=t + timedelta(days=10),
        valid_to=t + timedelta(days=20),
        supersedes="f1",
        hours=240,
    )
    b.node(
        "f3",
        NodeKind.FACT,
        "Jonas works at Bosch (freelance)",
        valid_from=t + timedelta(days=20),
        hours=480,
    )
    b.edge("f3", "f2", EdgeKind.SUPERSEDES)  # only the edge links f3 (no pointers)
    res = _ask(b, "Zalando", mode="bm25")
    assert len(res.items) == 1  # one item per chain
    chain = res.items[0].chain
    assert chain is not None and [c.node_id for c in chain] == ["f1", "f2", "f3"]
    assert [c.current for c in chain] == [False, False, True]
    # as of day 5 only the first belief was valid and known
    res = _ask(b, "Jonas works", mode="bm25", as_of=t + timedelta(days=5))
    assert [i.node_id for i in res.items] == ["f1"]
    assert [c.node_id for c in res.items[0].chain or []] == ["f1"]
    # between days 12-15 the Zalando belief was valid
    res = _ask(
        b,
        "Jonas works",
        mode="bm25",
        chains=False,
        between=TimeRange(start=t + timedelta(days=12), end=t + timedelta(days=15)),
    )
    assert [i.node_id for i in res.items] == ["f2"]


def test_chain_walk_is_linear(embedder: HashingEmbedder) -> None:
    from topologies.read.chains import chain_of

    b = Builder(embedder)
    n = 60
    for i in range(n):
        b.node(
            f"f{i}",
            NodeKind.FACT,
            f"revision {i}",
            hours=i,
            supersedes=f"f{i - 1}" if i else None,
            superseded_by=f"f{i + 1}" if i < n - 1 else None,
        )
    calls = 0
    graph = b.memory.graph
    original = graph.get

    def counting(node_id: str):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return original(node_id)

    graph.get = counting  # type: ignore[method-assign]
    arc = chain_of(graph, "f30")
    assert [x.id for x in arc] == [f"f{i}" for i in range(n)]
    assert calls <= 2 * n + 2


def test_query_never_writes_and_never_calls_an_llm(
    world: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx
    import openai

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the read path touched an LLM / HTTP client")

    monkeypatch.setattr(openai.OpenAI, "__init__", boom)
    monkeypatch.setattr(openai.AsyncOpenAI, "__init__", boom)
    monkeypatch.setattr(httpx.Client, "send", boom)
    monkeypatch.setattr(httpx.AsyncClient, "send", boom)
    before = {n.id: n for n in world.memory.graph.nodes()}
    reader = Reader(world.embedder)
    for mode in ("hybrid", "bm25", "dense"):
        res = reader.query(world.memory, QueryRequest(text="crown molar twinge", mode=mode))
        assert res.items
    after = {n.id: n for n in world.memory.graph.nodes()}
    assert all(before[k] is after[k] for k in before)  # no node replaced
    assert not world.memory.in_transaction


def test_reader_follows_new_events_without_rebuild(world: Builder) -> None:
    reader = Reader(world.embedder)
    assert not reader.query(world.memory, QueryRequest(text="ukulele", mode="bm25")).items
    world.event("chat-9", "Jonas", "bought a ukulele for Mika", hours=70)
    reader.apply(world.changes[-1])
    res = reader.query(world.memory, QueryRequest(text="ukulele", k=1))
    assert res.items[0].event_ids == ["chat-9"]
    world.event("chat-10", "Jonas", "ukulele lessons on Tuesdays", hours=71)  # no apply: synced
    res = reader.query(world.memory, QueryRequest(text="ukulele lessons", k=1))
    assert res.items[0].event_ids == ["chat-10"]


def test_concept_citations_put_matched_evidence_first(world: Builder) -> None:
    res = _ask(world, "reimbursement form insurer", ReadConfig(contiguity=False), k=10)
    concept = next(i for i in res.items if i.node_id == "c_teeth")
    assert concept.event_ids[0] == "cal-2"  # the matching turn, although mail-1's edge is stronger
    assert set(concept.event_ids) == {"mail-1", "note-1", "cal-2"}
