"""Issue 11 item 4: belief revisions in plain wording, folded as events and read back whole."""

from __future__ import annotations

from datetime import timedelta

import pytest

from benchmarks.bench_beliefs import load_set, make_engine, pair_events, statement_event
from schemas.graph import NodeKind
from schemas.query import QueryRequest
from tests.facts.helpers import T0, engine
from topologies.embedding import Embedder
from topologies.facts.chains import chain_of
from topologies.facts.slots import cue_of, holder_of, mode_of, slots_of
from topologies.read import Reader

COFFEE = [
    "Three espressos a day, minimum, that's how I get through the week.",
    "Cutting down to a single cup before noon.",
    "Fourteen days with zero caffeine now, rooibos instead.",
    "Coffee again, but decaf pour-over only.",
    "Swapped the decaf for matcha.",
]
NOISE = [
    "The quarterly report for the Hamburg client went out on Monday morning.",
    "Picked up the parcel from the post office near the station after work.",
    "The heating engineer will replace the boiler valve in the flat next week.",
    "Our team retro moved the sprint review to the large meeting room upstairs.",
    "Booked the car for its winter tyre change at the garage on Friday.",
]


async def test_coffee_revised_five_times_comes_back_as_one_chain_of_five(
    minilm: Embedder,
) -> None:
    eng = engine(minilm)  # heuristic planner, the full fold
    memory = eng.new_memory("alice")
    for i, text in enumerate(COFFEE):
        when = T0 + timedelta(days=30 * i)
        await eng.fold(memory, statement_event("alice", ("coffee", i), text, None, when))
        noise = statement_event("alice", ("noise", i), NOISE[i], None, when + timedelta(days=2))
        await eng.fold(memory, noise)
    reader = Reader(minilm)
    for query in ("how much coffee do I drink", "matcha", "rooibos"):
        response = reader.query(memory, QueryRequest(text=query, k=5))
        chains = [hit.chain for hit in response.items if hit.chain]
        assert len(chains) == 1, query  # the chain once, whichever revision the query hit
        assert [link.text for link in chains[0]] == COFFEE
        assert [link.current for link in chains[0]] == [False, False, False, False, True]
    events_only = reader.query(memory, QueryRequest(text="rooibos", k=3, kinds=[NodeKind.EVENT]))
    hit = events_only.items[0]
    assert hit.kind == NodeKind.EVENT and "rooibos" in hit.text  # the revision's own event
    assert hit.chain is not None and [link.text for link in hit.chain] == COFFEE
    (matcha,) = [f for f in memory.graph.nodes(NodeKind.FACT) if f.source_event_id == "coffee-4"]
    assert [n.text for n in chain_of(memory, matcha.id)] == COFFEE


@pytest.mark.parametrize("pair", load_set()["near_misses"], ids=lambda p: p["id"])
async def test_near_misses_stay_separate(pair: dict[str, object], minilm: Embedder) -> None:
    eng = make_engine(minilm)
    events = pair_events(pair)
    memory = eng.new_memory(events[0].tenant)
    for event in events:
        await eng.fold(memory, event)
    facts = list(memory.graph.nodes(NodeKind.FACT))
    assert facts, "each statement is read"
    assert not any(f.supersedes for f in facts), pair["kind"]


def test_holder_is_the_author_a_relative_a_name_or_unresolved() -> None:
    assert holder_of("I moved to Leeds last month.", "") == "self:"
    assert holder_of("Cutting down to a single cup before noon.", "sam") == "self:sam"
    assert holder_of("My sister moved to Cardiff.", "") == "rel::sister"
    assert holder_of("Priya left Stripe for a startup.", "") == "name:priya"
    assert holder_of("Upped the savings to 500 a month.", "") == "self:"  # a verb, no name
    assert holder_of("She's moving to Leeds.", "") == ""
    assert holder_of("Your kids are so sweet.", "") == ""
    assert holder_of("Music can be so uplifting.", "") == ""  # says how things are in general


def test_mode_and_cue() -> None:
    assert mode_of("Should I switch to decaf?") == "question"
    assert mode_of("If I ever quit I'd open a bakery.") == "hypothetical"
    assert mode_of("Back in school I used to hate running.") == "past"
    assert mode_of("I joined a gym last week.") == "episode"
    assert mode_of("Moved to Leeds last week.") == ""  # a dated change is still a change
    assert cue_of("Swapped the decaf for matcha.") == 2
    assert cue_of("I won't quit on my dreams.") == 0  # negated
    assert cue_of("It pushed me to take the plunge.") == 0
    assert cue_of("Coffee again, but decaf only.") == 2
    assert cue_of("Lately I read a lot.") == 1


def test_topic_drops_quantities_cues_and_function_words() -> None:
    assert slots_of("Three espressos a day, minimum.", "").topic == "espressos"
    assert slots_of("I love it!", "").topic == ""  # names nothing: never a belief to revise
    assert not slots_of("I love it!", "").asserts
