"""The k items of a query: each brings evidence the others lack (collapse, chains, concepts)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from read_helpers import T0, Builder, ask, eid

from schemas.graph import EdgeKind, NodeKind
from topologies.embedding import HashingEmbedder
from topologies.read import ReadConfig
from topologies.read.select import Candidate, choose, collapse


def _fact(b: Builder, fact_id: str, text: str, event_id: str, hours: float, **extra: object) -> str:
    b.node(fact_id, NodeKind.FACT, text, hours=hours, source_event_id=event_id, **extra)
    b.edge(fact_id, eid(b, event_id), EdgeKind.DERIVED_FROM)
    return fact_id


@pytest.fixture
def garden(embedder: HashingEmbedder) -> Builder:
    """Four events about tomatoes; the first has two facts extracted from it."""
    b = Builder(embedder)
    b.event("g-1", "Garden", "Planted six tomato seedlings along the south fence", hours=1)
    b.event("g-2", "Garden", "The tomato plants need stakes before the storm", hours=30)
    b.event("g-3", "Market", "Sold tomato jam at the Saturday market stall", hours=60)
    b.event("g-4", "Kitchen", "Tomato sauce batch canned, twelve jars", hours=90)
    _fact(b, "f-1", "Six tomato seedlings grow along the south fence", "g-1", 1)
    _fact(b, "f-2", "The tomato seedlings are planted by the fence", "g-1", 1)
    return b


def test_k_items_cite_k_distinct_events(garden: Builder) -> None:
    res = ask(garden, "tomato seedlings fence", ReadConfig(contiguity=False), k=4)
    cited = [e for item in res.items for e in item.event_ids]
    assert len(res.items) == 4
    assert sorted(cited) == ["g-1", "g-2", "g-3", "g-4"]  # the facts of g-1 took no slot


def test_an_event_and_its_facts_collapse_into_one_item(garden: Builder) -> None:
    res = ask(garden, "tomato seedlings fence", ReadConfig(contiguity=False), k=4)
    (first,) = [i for i in res.items if "g-1" in i.event_ids]
    members = {first.node_id, *first.explanation.collapsed}
    assert members == {eid(garden, "g-1"), "f-1", "f-2"}  # the best one shown, the others named
    assert first.event_ids == ["g-1"]


def test_without_the_rule_facts_repeat_their_event() -> None:
    """The check above can fail: plain top-k of the same candidates repeats g-1."""
    cands = [
        Candidate("f-1", NodeKind.FACT, 1.0, ["g-1"]),
        Candidate("ev-1", NodeKind.EVENT, 0.9, ["g-1"]),
        Candidate("ev-2", NodeKind.EVENT, 0.5, ["g-2"]),
    ]
    assert [c.cites[0] for c in cands[:2]] == ["g-1", "g-1"]
    chosen = choose(collapse(cands), 2, lambda _: None, 0.0, 0.9)
    assert [g.cites for g in chosen] == [["g-1"], ["g-2"]]
    assert chosen[0].members == ["ev-1"]


def test_near_duplicates_give_way_to_distinct_evidence(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("d-1", "Standup", "Deploy of the billing service moved to Friday", hours=1)
    b.event("d-2", "Standup", "Deploy of the billing service moved to Friday", hours=20)
    b.event("d-3", "Mail", "Billing deploy checklist: migrations first", hours=40)
    plain = ask(b, "billing deploy Friday", ReadConfig(mmr_weight=0.0, contiguity=False), k=2)
    assert {e for i in plain.items for e in i.event_ids} == {"d-1", "d-2"}
    res = ask(b, "billing deploy Friday", ReadConfig(contiguity=False), k=2)
    assert {e for i in res.items for e in i.event_ids} == {"d-3"} | (
        {"d-1", "d-2"} & {res.items[0].event_ids[0]}
    )


@pytest.fixture
def dentist(embedder: HashingEmbedder) -> Builder:
    b = Builder(embedder)
    b.event("m-1", "Dentist", "Dentist bill paid", hours=1)
    b.event("m-2", "Dentist", "Dentist says floss more", hours=20)
    b.event("m-3", "Calendar", "Crown fitting at the dentist practice, bring the card", hours=40)
    b.event("m-4", "Mail", "Reminder from the dentist practice: crown follow-up, call us", hours=60)
    b.node("c-crown", NodeKind.CONCEPT, "Dentist crown treatment", hours=60)
    b.edge(eid(b, "m-3"), "c-crown", EdgeKind.GROUNDS)
    b.edge(eid(b, "m-4"), "c-crown", EdgeKind.GROUNDS)
    b.node("c-bills", NodeKind.CONCEPT, "Dentist bills", hours=1)
    b.edge(eid(b, "m-1"), "c-bills", EdgeKind.GROUNDS)
    return b


def test_a_concept_takes_a_slot_only_with_new_evidence(dentist: Builder) -> None:
    # the selection rule alone: by default "Dentist crown treatment", a weaker match than
    # the crown fitting it summarises, is held just below it (topologies/read/lift.py)
    cfg = ReadConfig(contiguity=False, graph_cap=False)
    res = ask(dentist, "dentist", cfg, k=2, kinds=[NodeKind.EVENT, NodeKind.CONCEPT])
    by_id = {i.node_id: i for i in res.items}
    # "Dentist crown treatment" brings two matching events that the two slots would not
    # hold otherwise, together worth more than the second event it pushes out
    assert sorted(by_id["c-crown"].event_ids) == ["m-3", "m-4"]
    # "Dentist bills" cites only the bill, an item of its own: it takes no slot
    assert "c-bills" not in by_id
    cited = [e for i in res.items for e in i.event_ids]
    assert len(cited) == len(set(cited)) == 3


def test_a_chain_is_one_item_citing_its_revisions(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    for i, employer in enumerate(["Siemens", "Zalando", "Bosch"]):
        b.event(f"job-{i}", "Jonas", f"Jonas now works at {employer}", hours=100 * i)
    t = T0
    _fact(b, "f-0", "Jonas works at Siemens", "job-0", 0, superseded_by="f-1",
          valid_from=t, valid_to=t + timedelta(hours=100))  # fmt: skip
    _fact(b, "f-1", "Jonas works at Zalando", "job-1", 100, supersedes="f-0", superseded_by="f-2",
          valid_from=t + timedelta(hours=100), valid_to=t + timedelta(hours=200))  # fmt: skip
    _fact(b, "f-2", "Jonas works at Bosch", "job-2", 200, supersedes="f-1",
          valid_from=t + timedelta(hours=200))  # fmt: skip
    res = ask(b, "Jonas works Zalando", kinds=[NodeKind.FACT], k=3)
    assert len(res.items) == 1
    (item,) = res.items
    assert [c.node_id for c in item.chain or []] == ["f-0", "f-1", "f-2"]
    assert item.event_ids[0] == "job-1"  # the revision that matched first, then the others
    assert sorted(item.event_ids) == ["job-0", "job-1", "job-2"]


def test_a_chain_is_shown_as_the_revision_the_query_matched() -> None:
    # the newest revision scores best through the graph, the older one matched the words
    cands = [
        Candidate("f-new", NodeKind.FACT, 0.9, ["g-3"], chain_key="f-old", direct=0.004),
        Candidate("f-mid", NodeKind.FACT, 0.8, ["g-2"], chain_key="f-old", direct=0.022),
        Candidate("f-old", NodeKind.FACT, 0.3, ["g-1"], chain_key="f-old", direct=0.0),
    ]
    (group,) = collapse(cands)
    assert group.node_id == "f-mid" and group.score == 0.9
    assert set(group.members) == {"f-new", "f-old"}
    assert group.cites[0] == "g-2" and set(group.cites) == {"g-1", "g-2", "g-3"}
