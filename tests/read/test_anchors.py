"""What a query names: periods of time ("last week") and people or things (the second hop)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from read_helpers import T0, Builder, ask, set_participants

from topologies.embedding import HashingEmbedder
from topologies.entities import ensure_entity_index
from topologies.memory import event_node_id
from topologies.read import ReadConfig
from topologies.read.entities import EntityCache, entity_hops
from topologies.read.retrieve import common_names, without_names
from topologies.read.temporal import periods

NOW = T0 + timedelta(days=30)  # the Builder's stream clock: Wed 2 Dec 2026, 09:00


def test_periods_are_read_against_the_stream_clock() -> None:
    (week,) = periods("what did I do last week?", NOW)
    assert (week.start.date().isoformat(), week.end.date().isoformat()) == (
        "2026-11-23",
        "2026-11-30",
    )
    (may,) = periods("the trip in May 2023", NOW)
    assert (may.start, may.end) == (
        datetime(2023, 5, 1, tzinfo=UTC),
        datetime(2023, 6, 1, tzinfo=UTC),
    )
    (day,) = periods("who called yesterday", NOW)
    assert day.start.date().isoformat() == "2026-12-01"
    assert periods("when did I plant the tomatoes?", NOW) == []


def test_last_week_puts_the_events_of_last_week_first(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("gym-early", "Gym", "Climbing gym session, bouldering", hours=24 * 7)
    b.event("gym-before", "Gym", "Climbing gym session, bouldering", hours=24 * 14)
    b.event(
        "gym-last-week",  # Tue 24 Nov; a longer text: without the period it ranks lower
        "Gym",
        "Climbing gym session, bouldering, then a long walk home along the canal",
        hours=24 * 22,
    )
    cfg = ReadConfig(contiguity=False)
    plain = ask(b, "climbing gym bouldering", cfg, k=3)
    assert plain.items[0].event_ids != ["gym-last-week"]
    res = ask(b, "climbing gym bouldering last week", cfg, k=3)
    assert res.items[0].event_ids == ["gym-last-week"]
    assert [i.explanation.in_period for i in res.items] == [True, False, False]


def test_a_period_is_a_boost_not_a_filter(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("tax", "Taxes", "Filed the tax return with the Finanzamt", hours=24)
    res = ask(b, "tax return last week", k=3)
    assert [i.event_ids for i in res.items] == [["tax"]]  # outside the period, still found


def test_a_rare_name_in_a_hit_leads_to_the_second_hop(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("rec", "Melanie", "You should read Becoming Nicole, it changed my view", hours=1)
    b.event("read", "Caroline", "Finished Becoming Nicole on the train, loved it", hours=300)
    for i in range(6):
        b.event(f"x-{i}", "Caroline", f"Pottery class number {i} with the kids", hours=400 + i)
    cfg = ReadConfig(contiguity=False, feedback_weight=0.0)  # feedback alone finds it here
    question = "what did Melanie suggest I should read"
    without = ask(b, question, cfg.model_copy(update={"entity_hop_weight": 0.0}), k=2)
    assert "read" not in {e for i in without.items for e in i.event_ids}
    res = ask(b, question, cfg, k=2)
    assert [i.event_ids for i in res.items] == [["rec"], ["read"]]
    assert res.items[1].explanation.shared_name == "becoming nicole"


def test_a_name_in_many_events_links_nothing_and_is_no_search_word(
    embedder: HashingEmbedder,
) -> None:
    b = Builder(embedder)
    for i in range(5):
        b.event(f"n-{i}", "Turtles", f"Turtle tank cleaned, round {i}", hours=i)
    set_participants(b, {f"n-{i}": ["Nate"] for i in range(5)})
    index = ensure_entity_index(b.memory)
    assert common_names(index, frozenset({"nate", "turtle"}), 3) == ["nate"]
    assert common_names(index, frozenset({"nate"}), 10) == []
    assert without_names("What has Nate's turtle eaten?", ["nate"]) == "What has   turtle eaten?"
    first = [(event_node_id(b.memory.tenant, "n-0"), 1.0)]
    graph = b.memory.graph
    assert entity_hops(index, EntityCache(), graph, frozenset(), first, 3) == {}
    linked = entity_hops(index, EntityCache(), graph, frozenset(), first, 10)
    assert {hop.name for hop in linked.values()} == {"nate"} and len(linked) == 4


def test_events_involving_the_named_person_rank_first(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("j-1", "Joanna", "Here is a recipe for a dairy-free cake", hours=1)
    b.event("n-1", "Nate", "Here is a recipe for coconut ice cream, cooled overnight", hours=2)
    b.event("j-2", "Joanna", "Here is a recipe for a plum tart", hours=3)
    set_participants(b, {"j-1": ["Joanna"], "n-1": ["Nate"], "j-2": ["Joanna"]})
    plain = ask(b, "recipe", ReadConfig(contiguity=False), k=3)
    assert plain.items[0].event_ids != ["n-1"]
    res = ask(b, "What recipes has Nate made?", ReadConfig(contiguity=False), k=3)
    assert res.items[0].event_ids == ["n-1"]
    assert res.items[0].explanation.anchors == ["nate"]


def test_a_ticket_the_question_names_brings_the_events_that_write_it(
    embedder: HashingEmbedder,
) -> None:
    b = Builder(embedder)
    b.event("late", "#launch", "FLX-142 update: the partner feed still lands late", hours=1)
    b.event("fix", "#launch", "The fallback for FLX-142 is in review", hours=2)
    for i in range(4):
        b.event(
            f"other-{i}", "#launch", f"What happened with the demo slides, round {i}?", hours=3 + i
        )
    res = ask(b, "what happened with FLX-142", ReadConfig(contiguity=False), k=2)
    assert sorted(e for i in res.items for e in i.event_ids) == ["fix", "late"]
    assert all(i.explanation.anchors == ["flx-142"] for i in res.items)
